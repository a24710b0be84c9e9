import { clientFromEnv } from "@warden/client/next";
import { accounts } from "../../../../../lib/accounts";

const UNKNOWN_ACCOUNT = { error: "not_found", code: "unknown_account", message: "No such account." };

// Feedback: tell Warden what an account turned out to be (here, abuse found later by your team).
export async function POST(request: Request, { params }: { params: Promise<{ email: string }> }) {
  const adminToken = process.env.ADMIN_TOKEN;
  if (!adminToken || request.headers.get("authorization") !== `Bearer ${adminToken}`)
    return new Response(null, { status: 401 });
  const account = accounts.get((await params).email);
  if (!account) return Response.json(UNKNOWN_ACCOUNT, { status: 404 });
  const sent = await clientFromEnv().feedback.send({ eventId: account.eventId, outcome: "abuse_confirmed" });
  return sent.ok ? Response.json(sent.value) : Response.json(sent.error ?? null, { status: 502 });
}
