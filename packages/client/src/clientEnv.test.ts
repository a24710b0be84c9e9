import { describe, expect, it } from "vitest";
import { CLIENT_ENV, WardenClient } from "./client.js";

describe("WardenClient.fromEnv", () => {
  const env = {
    WARDEN_URL: "http://127.0.0.1:8080/",
    WARDEN_API_KEY: "wdn_x",
    WARDEN_TENANT: "acme",
    WARDEN_TICKET_SECRET: "a-ticket-secret-of-at-least-32-characters",
  };

  it("configures the client the gates need from WARDEN_URL, WARDEN_API_KEY, WARDEN_TENANT and WARDEN_TICKET_SECRET", () => {
    const client = WardenClient.fromEnv(env);
    expect(client.baseUrl).toBe("http://127.0.0.1:8080");
    expect(client.tenantId).toBe("acme");
    expect(client.ticketSecret).toBe(env.WARDEN_TICKET_SECRET);
    expect(Object.values(CLIENT_ENV)).toEqual(expect.arrayContaining(Object.keys(env)));
  });

  it("refuses a verify timeout that is not a number of milliseconds", () => {
    expect(() => WardenClient.fromEnv({ ...env, WARDEN_VERIFY_TIMEOUT_MS: "soon" })).toThrow(
      "WARDEN_VERIFY_TIMEOUT_MS must be a number of milliseconds",
    );
    expect(() => WardenClient.fromEnv({ ...env, WARDEN_VERIFY_TIMEOUT_MS: "1000" })).not.toThrow();
  });

  it("names every required variable that is missing or empty, at start-up", () => {
    expect(() =>
      WardenClient.fromEnv({ ...env, WARDEN_TENANT: "", WARDEN_TICKET_SECRET: undefined }),
    ).toThrow("Warden's client needs WARDEN_TENANT, WARDEN_TICKET_SECRET in the environment");
  });
});
