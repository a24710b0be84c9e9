import { PageHeading } from "../components/PageHeading.js";
import { links } from "../router.js";

export function NotFoundPage({ path }: { path: string }) {
  return (
    <>
      <PageHeading title="Page not found" />
      <p>
        The console has no page <code>{path}</code>. Go to the <a href={links.overview}>overview</a>.
      </p>
    </>
  );
}
