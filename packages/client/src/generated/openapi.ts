// Generated from the server's /openapi.json by scripts/openapiTypes.mjs: do not edit.

export type paths = {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process is up */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Send this process traffic (the store's state is reported, not required) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz/store": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Verify can score: the store takes writes and recent answers were not mostly degraded */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/jwks.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Public keys that sign verdictToken (ES256) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Decide allow, challenge or deny for an attempted action */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Wins over the body's idempotencyKey. */
                    "idempotency-key"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description signup, trial_activation, api_key, … (any string of 1 to 128 characters). */
                        action: string;
                        subject: {
                            /** @description Raw address; needs the tenant's raw-PII opt-in. */
                            email?: string;
                            /** @description Hex SHA-256 of the trimmed, lower-cased address (preferred over email). */
                            emailSha256?: string;
                            /** @description Raw IP: one address, no prefix; needs the tenant's raw-PII opt-in. */
                            ip?: string;
                            /** @description Truncated network, e.g. 203.0.113.0/24 (preferred over ip): an address or a network of /24 or narrower (IPv4), /48 or narrower (IPv6); Warden truncates it to /24 or /48. */
                            ipTrunc?: string;
                            /** @description At most 2,048 characters; a user-agent in headers has the same cap. */
                            userAgent?: string;
                            /** @description The end user's request headers, as received and in the order received: at most 64, names of 1 to 128 token characters (or :pseudo-headers), values up to 8,192 characters. */
                            headers?: {
                                [key: string]: string | string[];
                            };
                            formData?: unknown;
                            formDataHashed?: unknown;
                            /** @description What the page observed of its browser, forwarded by your server. It can only add suspicion: a page can lie, so a clean report proves nothing. */
                            browserSignals?: {
                                /** @description navigator.webdriver as the page read it (@warden/browser collectSignals). */
                                webdriver?: boolean;
                                /** @description What a worker of the page read differently from the page itself: userAgent, platform, hardwareConcurrency, languages, userAgentData, webgl (other names are ignored). */
                                mismatch?: string[];
                                /** @description The page's worker reported a headless browser's user agent. */
                                workerHeadless?: boolean;
                            } & {
                                [key: string]: unknown;
                            };
                            /** @description Evidence that the form's page ran. With the tenant's requirePage, an attempt without it is a program that never ran the page. */
                            page?: {
                                /** @description The page token the form's page obtained when it loaded (POST /v1/page-tokens through your server; @warden/browser watchPage). */
                                token?: string;
                                /** @description What the page counted between load and submit (@warden/browser watchPage): trusted key presses, text inserted without a key press, pastes, autofills, pointer moves and presses, touches, and script-dispatched events. Only counts that incriminate are read. */
                                behaviour?: {
                                    elapsedMs?: number;
                                    keys?: number;
                                    inserted?: number;
                                    pasted?: number;
                                    autofilled?: number;
                                    pointerMoves?: number;
                                    clicks?: number;
                                    touches?: number;
                                    untrusted?: number;
                                } & {
                                    [key: string]: unknown;
                                };
                                /** @description What the page read of its browser (@warden/browser watchPage): the layout probe's measurements and the environment counted across attempts. It can only add suspicion or group attempts: a page can lie. */
                                environment?: {
                                    /** @description The sizes the page measured of its token's layout probe (POST /v1/page-tokens with probe). */
                                    probe?: number[];
                                    /** @description screen.width x screen.height, e.g. 1920x1080. */
                                    screen?: string;
                                    colorDepth?: number;
                                    pixelRatio?: number;
                                    /** @description navigator.hardwareConcurrency */
                                    cores?: number;
                                    /** @description navigator.deviceMemory */
                                    memory?: number;
                                    /** @description navigator.maxTouchPoints */
                                    touchPoints?: number;
                                    timezone?: string;
                                    /** @description navigator.languages, comma-separated. */
                                    languages?: string;
                                    /** @description navigator.platform */
                                    platform?: string;
                                    /** @description WebGL's unmasked renderer. */
                                    renderer?: string;
                                    /** @description A hash of a fixed drawing on a canvas. */
                                    canvas?: string;
                                    /** @description The same drawing read back differently twice, or a known colour read back altered. */
                                    canvasNoise?: boolean;
                                } & {
                                    [key: string]: unknown;
                                };
                            } & {
                                [key: string]: unknown;
                            };
                            /** @description The client's TLS handshake, forwarded by your server from the edge that saw it (the SDK's ja4Header option). A program that copies a browser's headers still shakes hands with its own TLS library. */
                            tls?: {
                                /** @description The client's JA4 TLS fingerprint as the edge that terminated its connection computed it (for example t13d1516h2_8daaf6152771_02713d6af862). */
                                ja4?: string;
                            } & {
                                [key: string]: unknown;
                            };
                        } & {
                            [key: string]: unknown;
                        };
                        session?: string;
                        surface?: string;
                        idempotencyKey?: string;
                        /** @description Arbitrary metadata; the members above are recognised. */
                        context?: {
                            /** @description Integration-side observation mode; never from client data. */
                            logOnly?: boolean;
                            /** @description { falseAllow, falseChallenge, falseDeny }: relative weights, defaults 1, 1, 3; invalid fields fall back to defaults. */
                            decisionCosts?: unknown;
                            challengeId?: string;
                        } & {
                            [key: string]: unknown;
                        };
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            decision: "allow" | "challenge" | "deny";
                            actorType: "human" | "agent_principal" | "agent_abusive" | "unknown";
                            confidence: number;
                            reasons: string[];
                            /** @description reasons in their additive object form (docs/api.md#reason-codes): entry i is reasons[i] with a stable code and a category to group by. */
                            reasonDetails: {
                                /** @description Stable code from the reason catalogue (docs/api.md, Reason codes). */
                                code: string;
                                /** @description The same sentence as reasons[i]. */
                                message: string;
                                category: "agent" | "browser" | "page" | "tls" | "email" | "network" | "form" | "velocity" | "policy" | "evidence" | "decision" | "challenge" | "mode" | "operational";
                            }[];
                            principal: {
                                resolved: boolean;
                                operator: string;
                                onBehalfOf: string;
                                identityBasis: string[];
                            };
                            verdictToken: string;
                            eventId: string;
                            degraded: boolean;
                            enforcementMode: "enforce" | "log_only";
                            /** @enum {boolean} */
                            challengeCleared?: true;
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/challenge": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Issue a challenge bound to a session, or complete one with a proof */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Wins over the body's idempotencyKey. */
                    "idempotency-key"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description From verify; required to issue. */
                        eventId?: string;
                        /** @description Required; at most 128 characters. */
                        session?: string;
                        /** @description Ordered method hints. */
                        prefer?: string[];
                        challengeId?: string;
                        /** @description proof_of_work: { nonce } (at most 64 characters); payment_preauth: { method: provider_setup_intent, setupIntentId }; web_bot_auth_stepup: { method: web_bot_auth, headers }; device_attestation: { method: webauthn, registration, assertion } (the two WebAuthn credentials' toJSON()). */
                        proof?: {
                            method?: string;
                            nonce?: string;
                            setupIntentId?: string;
                            /** @description web_bot_auth_stepup: the signed request's headers. */
                            headers?: {
                                [key: string]: string;
                            };
                            /** @description device_attestation: the credential from navigator.credentials.create, as its toJSON() (RegistrationResponseJSON). */
                            registration?: {
                                [key: string]: unknown;
                            };
                            /** @description device_attestation: the credential from navigator.credentials.get with the new credential, as its toJSON() (AuthenticationResponseJSON). */
                            assertion?: {
                                [key: string]: unknown;
                            };
                        } & {
                            [key: string]: unknown;
                        };
                        /** @description Body form of Idempotency-Key (the header wins): a retried completion replays its answer. */
                        idempotencyKey?: string;
                        context?: {
                            /** @description default, elevated or severe. */
                            riskTier?: string;
                        } & {
                            [key: string]: unknown;
                        };
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            challengeId: string;
                            method: string;
                            instructions: {
                                [key: string]: unknown;
                            };
                            boundTo: string;
                            /** Format: date-time */
                            expiresAt: string;
                            ok?: boolean;
                            /** Format: date-time */
                            clearedAt?: string;
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/page-tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Issue a page token for a form's page as it loads */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description The page request's network and user agent, read as verify reads them (the SDK's subjectFromRequest); the token is bound to short hashes of both. */
                        subject?: {
                            /** @description Raw IP: one address, no prefix; needs the tenant's raw-PII opt-in. */
                            ip?: string;
                            /** @description Truncated network, e.g. 203.0.113.0/24 (preferred over ip): an address or a network of /24 or narrower (IPv4), /48 or narrower (IPv6); Warden truncates it to /24 or /48. */
                            ipTrunc?: string;
                            /** @description At most 2,048 characters; a user-agent in headers has the same cap. */
                            userAgent?: string;
                            /** @description The end user's request headers, as received and in the order received: at most 64, names of 1 to 128 token characters (or :pseudo-headers), values up to 8,192 characters. */
                            headers?: {
                                [key: string]: string | string[];
                            };
                        } & {
                            [key: string]: unknown;
                        };
                        /** @description Hand the page a layout probe to measure (@warden/browser watchPage does): verify then requires the measurements with the form, so a client without a browser engine cannot use the token. */
                        probe?: boolean;
                        /** @description Hand the page the proof of work a challenge on its attempt will be sealed with, for it to solve in the background while the person fills the form in (@warden/browser watchPage does). */
                        pow?: boolean;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Hand it to the page; the form sends it back as subject.page.token. */
                            pageToken: string;
                            /** Format: date-time */
                            expiresAt: string;
                            /** @description With probe asked for: boxes for the page to lay out and measure (CSS declarations of each box and its children); hand it to the page with the token. */
                            probe?: {
                                boxes: {
                                    style: string[][];
                                    children: string[][][];
                                }[];
                            };
                            /** @description With pow asked for: the seed a proof_of_work challenge on the attempt that carries this token is sealed with (until its answer clears one challenge), for the page to solve in the background; hand it to the page with the token. */
                            pow?: {
                                /** @enum {string} */
                                type: "pow";
                                /** @description 32 hex characters, keyed to the token. */
                                seed: string;
                                /** @description The tenant's severe difficulty: an answer at it meets a challenge of any tier (sha256-prefix). */
                                difficulty: number;
                                /** @enum {string} */
                                algorithm: "sha256-prefix";
                            };
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/feedback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Attach a business outcome to an earlier verify event */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Wins over the body's idempotencyKey. */
                    "idempotency-key"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description From an earlier verify of this tenant. */
                        eventId: string;
                        /** @enum {string} */
                        outcome: "credit_burn" | "multi_account_cluster" | "abuse_confirmed" | "converted" | "false_positive" | "chargeback";
                        /** @description Magnitude in unit. */
                        value?: number;
                        /** @enum {string} */
                        unit?: "usd" | "credits" | "count";
                        /** @enum {string} */
                        source?: "billing" | "usage_metering" | "trust_queue" | "manual_review" | "customer_system" | "automated_detector";
                        /**
                         * Format: date-time
                         * @description ISO 8601 with an offset.
                         */
                        observedAt?: string;
                        idempotencyKey?: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            ok: boolean;
                            eventId: string;
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/feedback/{feedbackId}/resolution": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Resolve a quarantined observation: accept it (it counts) or reject it (it never counts) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    feedbackId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /**
                         * @description accept: the observation counts; reject: it never counts.
                         * @enum {string}
                         */
                        resolution: "accept" | "reject";
                        /** @description Why, for the audit record. */
                        note?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            feedbackId: string;
                            eventId: string;
                            status: "effective" | "quarantined" | "rejected" | "superseded";
                            resolution: "accept" | "reject";
                            note: string | null;
                            resolvedBy: string;
                            resolvedAt: string;
                            superseded: string[];
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/ledger/summary": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Ledger totals for the tenant: effective outcomes, dollar total, ARR, quarantined observations */
        get: {
            parameters: {
                query?: {
                    since?: string;
                    until?: string;
                    action?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            since: string | null;
                            until: string | null;
                            action: string | null;
                            outcomes: {
                                [key: string]: {
                                    effective: number;
                                    quarantined: number;
                                    rejected: number;
                                    superseded: number;
                                    /** @description Sums of values by unit, never converted. */
                                    totals: {
                                        [key: string]: number;
                                    };
                                };
                            };
                            /** @description Effective credit_burn values in usd. */
                            ledgerUsdTotal: number;
                            /** @description Sums of values by unit, never converted. */
                            creditBurnOtherUnits: {
                                [key: string]: number;
                            };
                            /** @description Effective converted values in usd. */
                            firstYearArrUsd: number;
                            quarantined: {
                                observation: {
                                    feedbackId: string;
                                    eventId: string;
                                    outcome: string;
                                    value: number | null;
                                    unit: string | null;
                                    source: string | null;
                                    observedAt: string;
                                    receivedAt: string;
                                    status: "effective" | "quarantined" | "rejected" | "superseded";
                                    conflictsWith: string | null;
                                    resolution: {
                                        resolution: "accept" | "reject";
                                        note: string | null;
                                        resolvedBy: string;
                                        resolvedAt: string;
                                        superseded: string[];
                                    } | null;
                                    supersededBy: string | null;
                                };
                                conflictsWith: {
                                    feedbackId: string;
                                    eventId: string;
                                    outcome: string;
                                    value: number | null;
                                    unit: string | null;
                                    source: string | null;
                                    observedAt: string;
                                    receivedAt: string;
                                    status: "effective" | "quarantined" | "rejected" | "superseded";
                                    conflictsWith: string | null;
                                    resolution: {
                                        resolution: "accept" | "reject";
                                        note: string | null;
                                        resolvedBy: string;
                                        resolvedAt: string;
                                        superseded: string[];
                                    } | null;
                                    supersededBy: string | null;
                                } | null;
                            }[];
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/policy/deny": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Append one value to one of the tenant policy's deny lists, stored as the policy's next version */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        list: "environments" | "tlsFingerprints" | "userAgents" | "shapes" | "emailDomains" | "networks";
                        value: string;
                        /** @description A policy version as events record it: "v<n>", or "default" for a tenant that never set one */
                        basedOn?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            list: "environments" | "tlsFingerprints" | "userAgents" | "shapes" | "emailDomains" | "networks";
                            value: string;
                            added: boolean;
                            /** @description A policy version as events record it: "v<n>", or "default" for a tenant that never set one */
                            policyVersion: string;
                            /** @description A policy version as events record it: "v<n>", or "default" for a tenant that never set one */
                            previousVersion: string;
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Events of the period, newest first, paginated; by session, decision, actorType, emailHash, network, reasonCode or degraded. With format=csv the table is answered as text/csv. */
        get: {
            parameters: {
                query?: {
                    /** @description Default: until − 7 days */
                    since?: string;
                    /** @description Default: now */
                    until?: string;
                    action?: string;
                    format?: "json" | "csv";
                    session?: string;
                    decision?: "allow" | "challenge" | "deny";
                    actorType?: "human" | "agent_principal" | "agent_abusive" | "unknown";
                    /** @description SHA-256 hex of the trimmed, lower-cased address (the form verify stores) */
                    emailHash?: string;
                    /** @description An IP address or network, no wider than /24 (IPv4) or /48 (IPv6): its truncated network */
                    network?: string;
                    reasonCode?: "agent_verified" | "agent_signature_invalid" | "agent_signature_unverified" | "ua_missing" | "ua_unrecognized" | "ua_automation" | "browser_headers_missing" | "browser_headers_impossible" | "browser_consistent" | "client_hints_mismatch" | "header_order_override" | "fetch_metadata_navigation_json" | "tls_library" | "tls_not_browser" | "tls_other_browser" | "tls_unfamiliar" | "page_webdriver" | "page_worker_headless" | "page_scope_mismatch" | "page_evidence_missing" | "page_token_invalid" | "page_submitted_fast" | "page_token_expired" | "page_other_user_agent" | "page_other_network" | "page_input_without_keys" | "page_pointer_teleported" | "page_synthetic_events" | "page_engine_absent" | "page_environment_inconsistent" | "page_language_mismatch" | "email_disposable" | "email_invalid" | "email_random" | "form_links" | "hosting_network" | "tenant_deny_list" | "tenant_allow_list" | "tenant_verified_agents" | "no_evidence" | "no_risk_signal" | "risk_estimate" | "challenge_cleared" | "challenge_cleared_after_degraded" | "clear_not_honoured" | "log_only" | "degraded" | "velocity_ip_network" | "velocity_email_hash" | "velocity_email_normalized" | "velocity_email_domain" | "velocity_session" | "velocity_form_value" | "velocity_page_token" | "campaign_surge";
                    degraded?: "true" | "false";
                    /** @description Items per page: JSON 1–500 (default 50); CSV up to 50,000 (default 50,000) */
                    limit?: string;
                    /** @description nextCursor of the previous page */
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            items: {
                                eventId: string;
                                /** Format: date-time */
                                createdAt: string;
                                action: string;
                                surface: string | null;
                                session: string | null;
                                decision: "allow" | "challenge" | "deny";
                                wouldBeDecision: "allow" | "challenge" | "deny";
                                actorType: "human" | "agent_principal" | "agent_abusive" | "unknown";
                                confidence: number;
                                risk: number | null;
                                degraded: boolean;
                                enforcementMode: "enforce" | "log_only";
                            }[];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/{eventId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One event in full: verdict, signals, principal, receipt claims, challenges and every observation */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    eventId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            event: {
                                eventId: string;
                                createdAt: string;
                                action: string;
                                surface: string | null;
                                session: string | null;
                                decision: string;
                                wouldBeDecision: string;
                                actorType: string;
                                confidence: number;
                                reasons: string[];
                                degraded: boolean;
                                enforcementMode: string;
                                costs: {
                                    falseAllow: number;
                                    falseChallenge: number;
                                    falseDeny: number;
                                };
                                signals: {
                                    [key: string]: unknown;
                                };
                                engineVersion: string;
                                policyVersion: string;
                                decidedBy: string;
                                principal: {
                                    resolved: boolean;
                                    operator: string;
                                    onBehalfOf: string;
                                    identityBasis: string[];
                                };
                                tokenClaims: {
                                    [key: string]: unknown;
                                };
                            };
                            challenges: {
                                challengeId: string;
                                method: string;
                                boundTo: string;
                                difficulty: number | null;
                                issuedAt: string;
                                expiresAt: string;
                                clearedAt: string | null;
                                redeemedAt: string | null;
                            }[];
                            observations: {
                                feedbackId: string;
                                eventId: string;
                                outcome: string;
                                value: number | null;
                                unit: string | null;
                                source: string | null;
                                observedAt: string;
                                receivedAt: string;
                                status: "effective" | "quarantined" | "rejected" | "superseded";
                                conflictsWith: string | null;
                                resolution: {
                                    resolution: "accept" | "reject";
                                    note: string | null;
                                    resolvedBy: string;
                                    resolvedAt: string;
                                    superseded: string[];
                                } | null;
                                supersededBy: string | null;
                            }[];
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/feedback/quarantined": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Quarantined observations observed in the period, newest first, with what each conflicted with. With format=csv the table is answered as text/csv. */
        get: {
            parameters: {
                query?: {
                    /** @description Default: until − 7 days */
                    since?: string;
                    /** @description Default: now */
                    until?: string;
                    action?: string;
                    format?: "json" | "csv";
                    /** @description Items per page: JSON 1–500 (default 50); CSV up to 50,000 (default 50,000) */
                    limit?: string;
                    /** @description nextCursor of the previous page */
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            items: {
                                observation: {
                                    feedbackId: string;
                                    eventId: string;
                                    outcome: string;
                                    value: number | null;
                                    unit: string | null;
                                    source: string | null;
                                    observedAt: string;
                                    receivedAt: string;
                                    status: "effective" | "quarantined" | "rejected" | "superseded";
                                    conflictsWith: string | null;
                                    resolution: {
                                        resolution: "accept" | "reject";
                                        note: string | null;
                                        resolvedBy: string;
                                        resolvedAt: string;
                                        superseded: string[];
                                    } | null;
                                    supersededBy: string | null;
                                };
                                conflictsWith: {
                                    feedbackId: string;
                                    eventId: string;
                                    outcome: string;
                                    value: number | null;
                                    unit: string | null;
                                    source: string | null;
                                    observedAt: string;
                                    receivedAt: string;
                                    status: "effective" | "quarantined" | "rejected" | "superseded";
                                    conflictsWith: string | null;
                                    resolution: {
                                        resolution: "accept" | "reject";
                                        note: string | null;
                                        resolvedBy: string;
                                        resolvedAt: string;
                                        superseded: string[];
                                    } | null;
                                    supersededBy: string | null;
                                } | null;
                            }[];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats/reasons": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Events of the period per reason code (an event counts once per code it gave), with its category and the decisions given. With format=csv the table is answered as text/csv. */
        get: {
            parameters: {
                query?: {
                    /** @description Default: until − 7 days */
                    since?: string;
                    /** @description Default: now */
                    until?: string;
                    action?: string;
                    format?: "json" | "csv";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            /** Format: date-time */
                            since: string;
                            /** Format: date-time */
                            until: string;
                            action: string | null;
                            rows: {
                                code: "agent_verified" | "agent_signature_invalid" | "agent_signature_unverified" | "ua_missing" | "ua_unrecognized" | "ua_automation" | "browser_headers_missing" | "browser_headers_impossible" | "browser_consistent" | "client_hints_mismatch" | "header_order_override" | "fetch_metadata_navigation_json" | "tls_library" | "tls_not_browser" | "tls_other_browser" | "tls_unfamiliar" | "page_webdriver" | "page_worker_headless" | "page_scope_mismatch" | "page_evidence_missing" | "page_token_invalid" | "page_submitted_fast" | "page_token_expired" | "page_other_user_agent" | "page_other_network" | "page_input_without_keys" | "page_pointer_teleported" | "page_synthetic_events" | "page_engine_absent" | "page_environment_inconsistent" | "page_language_mismatch" | "email_disposable" | "email_invalid" | "email_random" | "form_links" | "hosting_network" | "tenant_deny_list" | "tenant_allow_list" | "tenant_verified_agents" | "no_evidence" | "no_risk_signal" | "risk_estimate" | "challenge_cleared" | "challenge_cleared_after_degraded" | "clear_not_honoured" | "log_only" | "degraded" | "velocity_ip_network" | "velocity_email_hash" | "velocity_email_normalized" | "velocity_email_domain" | "velocity_session" | "velocity_form_value" | "velocity_page_token" | "campaign_surge";
                                category: "agent" | "browser" | "page" | "tls" | "email" | "network" | "form" | "velocity" | "policy" | "evidence" | "decision" | "challenge" | "mode" | "operational";
                                events: number;
                                decisions: {
                                    allow: number;
                                    challenge: number;
                                    deny: number;
                                };
                            }[];
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats/actions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every action the tenant has events for, in order: the values the action filter takes */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            /** @description Every action the tenant has events for, in order */
                            actions: string[];
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Attempts over time by action and how they ended: allowed at once, challenged then cleared, challenged and not cleared, denied. With format=csv the table is answered as text/csv. */
        get: {
            parameters: {
                query?: {
                    /** @description Default: until − 7 days */
                    since?: string;
                    /** @description Default: now */
                    until?: string;
                    action?: string;
                    format?: "json" | "csv";
                    bucket?: "hour" | "day";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            /** Format: date-time */
                            since: string;
                            /** Format: date-time */
                            until: string;
                            action: string | null;
                            bucket: "hour" | "day";
                            rows: {
                                /** Format: date-time */
                                bucketStart: string;
                                action: string;
                                ending: "allowed" | "cleared" | "challenged" | "denied";
                                degraded: boolean;
                                count: number;
                            }[];
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/attempts/{eventId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The attempt an event belongs to: its first verdict and the re-verify that redeemed its clear, each with its challenges and observations */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    eventId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            firstEventId: string;
                            reverifyEventId: string | null;
                            ending: "allowed" | "cleared" | "challenged" | "denied";
                            first: {
                                event: {
                                    eventId: string;
                                    createdAt: string;
                                    action: string;
                                    surface: string | null;
                                    session: string | null;
                                    decision: string;
                                    wouldBeDecision: string;
                                    actorType: string;
                                    confidence: number;
                                    reasons: string[];
                                    degraded: boolean;
                                    enforcementMode: string;
                                    costs: {
                                        falseAllow: number;
                                        falseChallenge: number;
                                        falseDeny: number;
                                    };
                                    signals: {
                                        [key: string]: unknown;
                                    };
                                    engineVersion: string;
                                    policyVersion: string;
                                    decidedBy: string;
                                    principal: {
                                        resolved: boolean;
                                        operator: string;
                                        onBehalfOf: string;
                                        identityBasis: string[];
                                    };
                                    tokenClaims: {
                                        [key: string]: unknown;
                                    };
                                };
                                challenges: {
                                    challengeId: string;
                                    method: string;
                                    boundTo: string;
                                    difficulty: number | null;
                                    issuedAt: string;
                                    expiresAt: string;
                                    clearedAt: string | null;
                                    redeemedAt: string | null;
                                }[];
                                observations: {
                                    feedbackId: string;
                                    eventId: string;
                                    outcome: string;
                                    value: number | null;
                                    unit: string | null;
                                    source: string | null;
                                    observedAt: string;
                                    receivedAt: string;
                                    status: "effective" | "quarantined" | "rejected" | "superseded";
                                    conflictsWith: string | null;
                                    resolution: {
                                        resolution: "accept" | "reject";
                                        note: string | null;
                                        resolvedBy: string;
                                        resolvedAt: string;
                                        superseded: string[];
                                    } | null;
                                    supersededBy: string | null;
                                }[];
                            };
                            reverify: {
                                event: {
                                    eventId: string;
                                    createdAt: string;
                                    action: string;
                                    surface: string | null;
                                    session: string | null;
                                    decision: string;
                                    wouldBeDecision: string;
                                    actorType: string;
                                    confidence: number;
                                    reasons: string[];
                                    degraded: boolean;
                                    enforcementMode: string;
                                    costs: {
                                        falseAllow: number;
                                        falseChallenge: number;
                                        falseDeny: number;
                                    };
                                    signals: {
                                        [key: string]: unknown;
                                    };
                                    engineVersion: string;
                                    policyVersion: string;
                                    decidedBy: string;
                                    principal: {
                                        resolved: boolean;
                                        operator: string;
                                        onBehalfOf: string;
                                        identityBasis: string[];
                                    };
                                    tokenClaims: {
                                        [key: string]: unknown;
                                    };
                                };
                                challenges: {
                                    challengeId: string;
                                    method: string;
                                    boundTo: string;
                                    difficulty: number | null;
                                    issuedAt: string;
                                    expiresAt: string;
                                    clearedAt: string | null;
                                    redeemedAt: string | null;
                                }[];
                                observations: {
                                    feedbackId: string;
                                    eventId: string;
                                    outcome: string;
                                    value: number | null;
                                    unit: string | null;
                                    source: string | null;
                                    observedAt: string;
                                    receivedAt: string;
                                    status: "effective" | "quarantined" | "rejected" | "superseded";
                                    conflictsWith: string | null;
                                    resolution: {
                                        resolution: "accept" | "reject";
                                        note: string | null;
                                        resolvedBy: string;
                                        resolvedAt: string;
                                        superseded: string[];
                                    } | null;
                                    supersededBy: string | null;
                                }[];
                            } | null;
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats/campaigns": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What attempts labelled abusive in the period share, with how many attempts share it unlabelled, and the deny list that would turn it away. With format=csv the table is answered as text/csv. */
        get: {
            parameters: {
                query?: {
                    /** @description Default: until − 7 days */
                    since?: string;
                    /** @description Default: now */
                    until?: string;
                    action?: string;
                    format?: "json" | "csv";
                    /** @description Campaigns to answer, 1–100 (default 20) */
                    limit?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            /** Format: date-time */
                            since: string;
                            /** Format: date-time */
                            until: string;
                            action: string | null;
                            abusiveAttempts: number;
                            truncated: boolean;
                            /** @description "v<n>", or "default" for a tenant that never set one */
                            policyVersion: string;
                            rows: {
                                kind: "environment" | "shape" | "tls" | "userAgent" | "emailDomain" | "network";
                                value: string;
                                /** @description Attempts bearing it with an effective abuse outcome */
                                labelled: number;
                                /** @description Attempts bearing it without one */
                                unlabelled: number;
                                /** @description Of the unlabelled, those with an effective converted or false_positive: the collateral */
                                good: number;
                                decisions: {
                                    allow: number;
                                    challenge: number;
                                    deny: number;
                                };
                                /** Format: date-time */
                                firstSeen: string;
                                /** Format: date-time */
                                lastSeen: string;
                                /** @description The deny list that would turn it away; null for a mark no deny list takes (none today) */
                                list: ("environments" | "tlsFingerprints" | "userAgents" | "shapes" | "emailDomains" | "networks") | (never | null);
                                /** @description Whether that deny list names it already */
                                listed: boolean;
                            }[];
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats/what-if-rule": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The attempts of the period (default the last 30 days) one more deny-list entry would have matched: their decisions and labels. With format=csv the table is answered as text/csv. */
        get: {
            parameters: {
                query: {
                    /** @description Default: until − 30 days */
                    since?: string;
                    /** @description Default: now */
                    until?: string;
                    list: "environments" | "tlsFingerprints" | "userAgents" | "shapes" | "emailDomains" | "networks";
                    value: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            /** Format: date-time */
                            since: string;
                            /** Format: date-time */
                            until: string;
                            list: "environments" | "tlsFingerprints" | "userAgents" | "shapes" | "emailDomains" | "networks";
                            /** @description The value as the list would keep it */
                            value: string;
                            /** @description Attempts of the period the rule would have matched */
                            events: number;
                            decisions: {
                                allow: number;
                                challenge: number;
                                deny: number;
                            };
                            newlyDenied: number;
                            abusive: number;
                            good: number;
                            unlabelled: number;
                            /** @description "v<n>", or "default" for a tenant that never set one */
                            policyVersion: string;
                            listed: boolean;
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats/decisions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Decisions over time by action, decision, actorType, degraded and enforcementMode. With format=csv the table is answered as text/csv. */
        get: {
            parameters: {
                query?: {
                    /** @description Default: until − 7 days */
                    since?: string;
                    /** @description Default: now */
                    until?: string;
                    action?: string;
                    format?: "json" | "csv";
                    bucket?: "hour" | "day";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            /** Format: date-time */
                            since: string;
                            /** Format: date-time */
                            until: string;
                            action: string | null;
                            bucket: "hour" | "day";
                            rows: {
                                /** Format: date-time */
                                bucketStart: string;
                                action: string;
                                decision: "allow" | "challenge" | "deny";
                                actorType: "human" | "agent_principal" | "agent_abusive" | "unknown";
                                degraded: boolean;
                                enforcementMode: "enforce" | "log_only";
                                count: number;
                            }[];
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats/challenges": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Challenges issued in the period by method: cleared, expired, open, redeemed. With format=csv the table is answered as text/csv. */
        get: {
            parameters: {
                query?: {
                    /** @description Default: until − 7 days */
                    since?: string;
                    /** @description Default: now */
                    until?: string;
                    action?: string;
                    format?: "json" | "csv";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            /** Format: date-time */
                            since: string;
                            /** Format: date-time */
                            until: string;
                            action: string | null;
                            rows: {
                                method: string;
                                issued: number;
                                cleared: number;
                                expired: number;
                                open: number;
                                redeemed: number;
                            }[];
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats/outcomes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Effective outcomes on the period's attempts (on any of their events) by the engine's first scored decision. With format=csv the table is answered as text/csv. */
        get: {
            parameters: {
                query?: {
                    /** @description Default: until − 7 days */
                    since?: string;
                    /** @description Default: now */
                    until?: string;
                    action?: string;
                    format?: "json" | "csv";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            /** Format: date-time */
                            since: string;
                            /** Format: date-time */
                            until: string;
                            action: string | null;
                            rows: {
                                decision: "allow" | "challenge" | "deny";
                                outcome: string;
                                events: number;
                                observations: number;
                            }[];
                            decisions: {
                                allow: number;
                                challenge: number;
                                deny: number;
                            };
                            quarantinedCount: number;
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats/calibration": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Estimated abuse risk in bins against the observed abuse rate (a reliability diagram). With format=csv the table is answered as text/csv. */
        get: {
            parameters: {
                query?: {
                    /** @description Default: until − 7 days */
                    since?: string;
                    /** @description Default: now */
                    until?: string;
                    action?: string;
                    format?: "json" | "csv";
                    /** @description Number of equal-width risk bins, 2–50 (default 10) */
                    bins?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            /** Format: date-time */
                            since: string;
                            /** Format: date-time */
                            until: string;
                            action: string | null;
                            bins: {
                                low: number;
                                high: number;
                                events: number;
                                labelled: number;
                                abusive: number;
                                meanRisk: number | null;
                                observedRate: number | null;
                                interval: {
                                    low: number;
                                    high: number;
                                } | null;
                            }[];
                            events: number;
                            labelled: number;
                            abusive: number;
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats/what-if": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The period's decisions replayed under other decisionCosts, with the policy that would apply them. With format=csv the table is answered as text/csv. */
        get: {
            parameters: {
                query?: {
                    /** @description Default: until − 7 days */
                    since?: string;
                    /** @description Default: now */
                    until?: string;
                    action?: string;
                    format?: "json" | "csv";
                    /** @description A positive relative weight (default: the tenant's current one) */
                    falseAllow?: string;
                    /** @description A positive relative weight (default: the tenant's current one) */
                    falseChallenge?: string;
                    /** @description A positive relative weight (default: the tenant's current one) */
                    falseDeny?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            /** Format: date-time */
                            since: string;
                            /** Format: date-time */
                            until: string;
                            action: string | null;
                            costs: {
                                falseAllow: number;
                                falseChallenge: number;
                                falseDeny: number;
                            };
                            currentCosts: {
                                falseAllow: number;
                                falseChallenge: number;
                                falseDeny: number;
                            };
                            events: number;
                            replayed: number;
                            kept: number;
                            recorded: {
                                allow: number;
                                challenge: number;
                                deny: number;
                            };
                            whatIf: {
                                allow: number;
                                challenge: number;
                                deny: number;
                            };
                            labelled: number;
                            expectedCost: {
                                recorded: number;
                                whatIf: number;
                            };
                            mistakes: {
                                recorded: {
                                    falseAllow: number;
                                    falseChallenge: number;
                                    falseDeny: number;
                                };
                                whatIf: {
                                    falseAllow: number;
                                    falseChallenge: number;
                                    falseDeny: number;
                                };
                            };
                            /** @description The tenant's current policy document with these decisionCosts: for `warden policy set` */
                            policy: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/session": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The console session the cookie stands for */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            keyId: string;
                            scopes: string[];
                            /** Format: date-time */
                            expiresAt: string;
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        put?: never;
        /** Sign in to the operator console with an API key that has ledger:read */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        apiKey: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            tenantId: string;
                            keyId: string;
                            scopes: string[];
                            /** Format: date-time */
                            expiresAt: string;
                        };
                    };
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        /** Sign out of the operator console: the session ends at once */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Stable label per HTTP status. */
                            error: string;
                            /** @description Human-readable; never handle on it. */
                            message: string;
                            /** @description Machine discriminator; handle on this. */
                            code: string;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics (aggregates only; no tenant labels) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
};
export type webhooks = Record<string, never>;
export type components = {
    schemas: never;
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
};
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
