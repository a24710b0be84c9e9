import { csvUrl, type Query } from "../api.js";

/** A download of the same table as CSV: the API's ?format=csv with the page's filters. */
export function CsvLink({ path, query, label }: { path: string; query: Query; label: string }) {
  return (
    <a class="csv" href={csvUrl(path, query)} download>
      Download {label} (CSV)
    </a>
  );
}
