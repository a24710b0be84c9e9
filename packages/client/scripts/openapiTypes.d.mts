export const GENERATED_FILE: string;
export function servedOpenApiDocument(): Promise<unknown>;
export function renderOpenapiTypes(): Promise<string>;
