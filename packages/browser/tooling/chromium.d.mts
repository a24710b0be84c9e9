import type { Browser } from "playwright-core";
export const CHROMIUM_PATH: string;
export function chromiumInstalled(): boolean;
export function launchChromium(extraArgs?: string[]): Promise<Browser>;
