export const ROUNDS_FILE: string;
export function renderRounds(): string;
