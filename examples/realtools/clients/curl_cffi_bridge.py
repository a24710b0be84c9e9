"""curl_cffi as clients/curlCffi.mjs drives it: one JSON request per line on stdin, one JSON answer
per line on stdout. A "session" line opens a curl_cffi Session impersonating a browser (its TLS,
HTTP/2 and default headers); "request" sends one request on it, with header overrides (a value of ""
removes the session's header of that name); "close" ends a session."""

import json
import sys

from curl_cffi import requests


def main() -> None:
    sessions = {}
    for line in sys.stdin:
        msg = json.loads(line)
        reply = {"id": msg["id"]}
        try:
            if msg["op"] == "session":
                # verify=False: the door's certificate is a self-signed test one; nothing else changes.
                sessions[msg["id"]] = requests.Session(impersonate=msg["impersonate"], verify=False, timeout=30)
            elif msg["op"] == "request":
                session = sessions[msg["session"]]
                headers = {name: value for name, value in msg["headers"] if value != ""}
                # curl_cffi drops a default header whose value is None.
                for name, value in msg["headers"]:
                    if value == "":
                        headers[name] = None
                answer = session.request(
                    msg["method"],
                    msg["url"],
                    headers=headers,
                    data=msg.get("body"),
                )
                reply["status"] = answer.status_code
                reply["text"] = answer.text
            elif msg["op"] == "close":
                session = sessions.pop(msg["session"], None)
                if session is not None:
                    session.close()
        except Exception as err:  # the Node side reports it as this signup's client error
            reply["error"] = f"{type(err).__name__}: {err}"
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
