export function renderWat(): string;
export function wasmKernelBinary(): Promise<Uint8Array<ArrayBuffer>>;
