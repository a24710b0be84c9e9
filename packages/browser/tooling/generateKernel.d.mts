export const ROUNDS_FILE: string;
export function renderRounds(): string;
export const K: readonly number[];
export const H: readonly number[];
