// The page's half: send the form; on 428 show <warden-challenge> with the ticket; when it clears,
// it fills wardenTicket and wardenChallengeId and submits the form again.
import { collectSignals, watchPage } from "/warden/warden.js";

const form = document.getElementById("signup");
const result = document.getElementById("result");
const slot = document.getElementById("challenge");
// What the page sees of its browser, read once while the person fills the form in; and evidence that
// this page ran (a page token from Warden) with counts of how the form was filled in.
const signals = collectSignals();
const page = watchPage();

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  result.textContent = "";
  // What the page sees of its browser goes along; the server forwards it to Warden.
  const body = {
    ...Object.fromEntries(new FormData(form)),
    wardenSignals: await signals,
    wardenPage: await page.report(),
  };
  const res = await fetch("/signup", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await res.json().catch(() => ({}));
  if (res.status === 201) {
    slot.replaceChildren();
    form.querySelector("#submit").hidden = true;
    result.textContent = `Welcome! Your account ${answer.created} is ready.`;
    result.dataset.state = "created";
  } else if (res.status === 428 && answer.code === "warden_challenge") {
    const element = document.createElement("warden-challenge");
    element.setAttribute("ticket", answer.ticket);
    element.setAttribute("submit", "");
    slot.replaceChildren(element);
    form.querySelector("#submit").hidden = true;
    element.focus();
  } else if (res.status === 428) {
    result.textContent = "We could not check this request just now. Please try again in a few seconds.";
    result.dataset.state = "unavailable";
  } else if (res.status === 403) {
    slot.replaceChildren();
    result.textContent =
      typeof answer.reference === "string"
        ? `Sorry, we cannot create this account. If you think this is a mistake, write to us and quote ${answer.reference}.`
        : "Sorry, we cannot create this account.";
    result.dataset.state = "refused";
  } else {
    result.textContent = answer.message ?? "Something went wrong.";
    result.dataset.state = "error";
  }
});
document.body.dataset.ready = "true";
