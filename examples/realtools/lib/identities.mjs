// Who signs up: a plausible name and a free-mail address per signup, never the same twice in a run
// (a repeated address or name would be scored as a repeat, which is not what this measures).
import { random } from "./addresses.mjs";

const FIRST = [
  "Anna",
  "Ben",
  "Carla",
  "David",
  "Elena",
  "Farid",
  "Grace",
  "Hugo",
  "Ines",
  "Jonas",
  "Kira",
  "Liam",
  "Maya",
  "Noah",
  "Olga",
  "Pablo",
  "Quinn",
  "Rosa",
  "Samir",
  "Tara",
  "Umar",
  "Vera",
  "Wen",
  "Ximena",
  "Yusuf",
  "Zoe",
  "Aiko",
  "Bruno",
  "Chloe",
  "Diego",
  "Emma",
  "Felix",
];
const LAST = [
  "Novak",
  "Garcia",
  "Schmidt",
  "Okafor",
  "Rossi",
  "Kowalski",
  "Nguyen",
  "Silva",
  "Dubois",
  "Larsen",
  "Moreau",
  "Tanaka",
  "Haddad",
  "Murphy",
  "Jensen",
  "Petrov",
  "Costa",
  "Weber",
  "Ortiz",
  "Fischer",
  "Yilmaz",
  "Bauer",
  "Lindqvist",
  "Mendes",
  "Kaur",
  "Walsh",
  "Horvat",
  "Sato",
  "Keller",
  "Byrne",
];
const DOMAINS = ["gmail.com", "outlook.com", "yahoo.com", "icloud.com", "gmx.de", "proton.me", "hotmail.com"];

/** Returns `next()`: { email, name }, distinct within the run. */
export function identities(seed = 30) {
  const rand = random(seed);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const used = new Set();
  return {
    next() {
      for (;;) {
        const first = pick(FIRST);
        const last = pick(LAST);
        const style = Math.floor(rand() * 3);
        const year = 60 + Math.floor(rand() * 45);
        const local =
          style === 0
            ? `${first}.${last}`
            : style === 1
              ? `${first[0]}${last}${String(year % 100).padStart(2, "0")}`
              : `${first}${last[0]}${1900 + year}`;
        const email = `${local.toLowerCase()}@${pick(DOMAINS)}`;
        if (used.has(email)) continue;
        used.add(email);
        return { email, name: `${first} ${last}` };
      }
    },
  };
}
