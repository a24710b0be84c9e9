export const SCOPE_FIELDS_FILES: { browser: string; client: string };
export function renderScopeFields(): Promise<string>;
