import { wardenRoute } from "@warden/client/next";
import { accounts } from "../../lib/accounts";

const INVALID_EMAIL = { error: "bad_request", code: "invalid_email", message: "Enter an email address." };
const WELCOME = '<p id="result" data-state="created">Your account is ready.</p>';

// The client comes from WARDEN_URL, WARDEN_API_KEY, WARDEN_TENANT and WARDEN_TICKET_SECRET on the
// first request; the client's address from the last X-Forwarded-For entry (run behind a proxy).
export const POST = wardenRoute(
  { action: "signup", email: (body) => body.email },
  async (_request, { form, eventId }) => {
    if (typeof form.email !== "string") return Response.json(INVALID_EMAIL, { status: 400 });
    accounts.set(form.email.trim().toLowerCase(), { eventId });
    return new Response(WELCOME, { status: 201, headers: { "content-type": "text/html; charset=utf-8" } });
  },
);
