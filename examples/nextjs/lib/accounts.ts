/** The accounts made, each with the eventId of the verdict that allowed it (your database, in your app). */
export const accounts = new Map<string, { eventId: string }>();
