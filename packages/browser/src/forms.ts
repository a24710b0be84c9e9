import { type PageWatch, type PageWatchOptions, watchPage } from "./pageWatch.js";
import { collectSignals } from "./signals.js";

const PROTECTED = Symbol.for("@warden/browser.protectForms");

/**
 * Forms marked `data-warden` carry the page's evidence with no script of the page's own: the page is
 * watched from load (watchPage, collectSignals), and when such a form is sent, its submit waits for
 * the report, which goes into hidden `wardenPage` and `wardenSignals` fields (JSON text; the gates
 * read either form), then goes on: a plain `<form method="post">` posts them with its fields, and a
 * page's own submit listener (which runs after this one) finds them in `new FormData(form)`.
 */
export function protectForms(opts: PageWatchOptions = {}): PageWatch {
  // Once per page: two copies of the package (the module and the script-tag build) share it.
  const holder = globalThis as { [PROTECTED]?: PageWatch };
  const existing = holder[PROTECTED];
  if (existing) return existing;
  const watch = watchPage(opts);
  holder[PROTECTED] = watch;
  const signals = collectSignals();
  /** Forms whose evidence is in place: their next submit goes through. */
  const ready = new WeakSet<HTMLFormElement>();
  document.addEventListener(
    "submit",
    (event) => {
      const form = event.target;
      if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-warden")) return;
      if (ready.has(form)) {
        ready.delete(form);
        return;
      }
      // Held back, before the page's own listeners see it, until the report is in the form.
      event.preventDefault();
      event.stopImmediatePropagation();
      const submitter = (event as SubmitEvent).submitter;
      void Promise.all([watch.report(), signals]).then(([page, browser]) => {
        field(form, "wardenPage").value = JSON.stringify(page);
        field(form, "wardenSignals").value = JSON.stringify(browser);
        ready.add(form);
        // In a task of its own: a microtask would run inside this submit's dispatch, while the form
        // is still firing its submission events, and the browser would ignore the new submit.
        setTimeout(() =>
          form.requestSubmit(submitter instanceof HTMLElement && submitter.isConnected ? submitter : null),
        );
      });
    },
    true,
  );
  return watch;
}

function field(form: HTMLFormElement, name: string): HTMLInputElement {
  let input = form.querySelector<HTMLInputElement>(`input[type="hidden"][name="${name}"]`);
  if (!input) {
    input = document.createElement("input");
    input.type = "hidden";
    input.name = name;
    form.append(input);
  }
  return input;
}

/** The package's entry protects the page's `form[data-warden]` by itself, once the document is parsed. */
export function protectMarkedForms(): void {
  if (typeof document === "undefined") return;
  const start = () => {
    if (document.querySelector("form[data-warden]")) protectForms();
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
  else start();
}
