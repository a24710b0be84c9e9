import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/**
 * The page's h1. It names the document and takes focus when the page opens (not on the first load),
 * so after following a nav link keyboard and reader users start at the new page.
 */
export function PageHeading({ title, children }: { title: string; children?: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Warden console`;
    if (document.activeElement && document.activeElement !== document.body) ref.current?.focus();
  }, [title]);
  return (
    <div class="page-head">
      <h1 tabIndex={-1} ref={ref}>
        {title}
      </h1>
      {children ? <p class="lede">{children}</p> : null}
    </div>
  );
}
