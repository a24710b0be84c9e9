import {
  parseDictionary as parseDictionaryOnce,
  parseItem as parseItemOnce,
  parseList as parseListOnce,
} from "structured-headers";

/**
 * Structured-field parses (RFC 8941) of the header values being checked, remembered for the few most
 * recent values. A request can name one header in each of its signatures and in many components of
 * each (Signature-Agent with a `key` per component): without this, every mention parsed the whole
 * value again, and a few kilobytes of headers cost a verify hundreds of milliseconds. Results are
 * shared between callers, which only read them.
 */
const REMEMBERED = 8;

function remembered<T>(parse: (input: string) => T): (input: string) => T {
  const recent = new Map<string, { ok: true; value: T } | { ok: false; error: unknown }>();
  return (input) => {
    let outcome = recent.get(input);
    if (outcome === undefined) {
      try {
        outcome = { ok: true, value: parse(input) };
      } catch (error) {
        outcome = { ok: false, error };
      }
      recent.set(input, outcome);
      if (recent.size > REMEMBERED) recent.delete(recent.keys().next().value as string);
    }
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  };
}

export const parseDictionary = remembered(parseDictionaryOnce);
export const parseItem = remembered(parseItemOnce);
export const parseList = remembered(parseListOnce);
