import ipaddr from "ipaddr.js";

/**
 * Whether an address's IPv4 part, if it has one, is written the one way servers, edges and logs
 * write it: four decimal numbers without leading zeros. ipaddr.js also reads the old inet_aton forms
 * (`010.1.2.3` as octal 8.1.2.3, `0x7f.1`, `127.1`, `2130706433`), which name another address than
 * anyone reading the text sees: verify's subject and the tenant's lists refuse them instead.
 * `address` is the address alone (no `/prefix`).
 */
export function canonicalIPv4(address: string): boolean {
  const ipv6 = address.includes(":");
  const v4 = ipv6 ? address.slice(address.lastIndexOf(":") + 1) : address;
  return (ipv6 && !v4.includes(".")) || ipaddr.IPv4.isValidFourPartDecimal(v4);
}
