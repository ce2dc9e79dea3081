#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A Pyroscope ingest endpoint (and Parca's WriteRaw through its HTTP gateway) for the
push tests, on 127.0.0.1 only, bounded in time.

Implements the documented contract of Grafana Pyroscope's POST /ingest: query
parameters name (APP{labels}), from and until (UNIX seconds) required, format (folded
by default, pprof, ...), sampleRate, spyName, units, aggregationType; for format=pprof a
multipart/form-data body whose form file field "profile" holds the profile (a raw body
is accepted too, as the server does); for folded a text body "a;b;c N" per line.
Each accepted profile is stored as NNNN.<format> with NNNN.query beside it; a request
breaking the contract gets 400 with the reason (so a test sees it in perfkit's message).
POST /profiles/writeraw takes parca.profilestore.v1alpha1.WriteRawRequest in the JSON
mapping of protobuf (what Parca's grpc-gateway takes): series[].labels.labels[] of
{name, value} with __name__, series[].samples[].rawProfile (base64 pprof); each profile
is stored as NNNN.pprof with its labels in NNNN.query ("labels=k=v,...").

  push-receiver.py --store DIR --port-file FILE [--port N] [--lifetime SECS]
                   [--basic USER:PASS] [--bearer TOKEN] [--fail-first N --fail-status S]
                   [--tls CERT KEY]
"""
import argparse
import base64
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import HTTPServer, BaseHTTPRequestHandler

ap = argparse.ArgumentParser()
ap.add_argument("--store", required=True)
ap.add_argument("--port-file", required=True)
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--lifetime", type=float, default=120)
ap.add_argument("--basic")
ap.add_argument("--bearer")
ap.add_argument("--fail-first", type=int, default=0)
ap.add_argument("--fail-status", type=int, default=503)
ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), help="serve https")
args = ap.parse_args()
os.makedirs(args.store, exist_ok=True)
lock = threading.Lock()
state = {"n": len([f for f in os.listdir(args.store) if f.endswith(".query")]), "seen": 0}
NAME_RE = re.compile(r"^[A-Za-z0-9_.\-/:]+\{([A-Za-z_][A-Za-z0-9_]*=[^,{}=]+(,[A-Za-z_][A-Za-z0-9_]*=[^,{}=]+)*)?\}$")


def multipart_field(body, ctype, field):
    m = re.search(r'boundary="?([^";]+)"?', ctype)
    if not m:
        return None
    sep = b"--" + m.group(1).encode()
    for part in body.split(sep)[1:]:
        if part.startswith(b"--"):
            break
        head, _, data = part.partition(b"\r\n\r\n")
        if re.search(rb'name="' + field.encode() + rb'"', head):
            return data[:-2] if data.endswith(b"\r\n") else data
    return None


class H(BaseHTTPRequestHandler):
    def log_message(self, fmt, *a):
        sys.stderr.write("receiver: " + fmt % a + "\n")

    def reply(self, code, text):
        b = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        u = urllib.parse.urlsplit(self.path)
        if u.path not in ("/ingest", "/profiles/writeraw"):
            return self.reply(404, "not found")
        auth = self.headers.get("Authorization", "")
        if args.basic and auth != "Basic " + base64.b64encode(args.basic.encode()).decode():
            return self.reply(401, "unauthorized")
        if args.bearer and auth != "Bearer " + args.bearer:
            return self.reply(401, "unauthorized")
        with lock:
            state["seen"] += 1
            if state["seen"] <= args.fail_first:
                return self.reply(args.fail_status, "try later")
        if u.path == "/profiles/writeraw":
            return self.writeraw(body, auth)
        q = urllib.parse.parse_qs(u.query, keep_blank_values=True, strict_parsing=True)
        for k in ("name", "from", "until"):
            if k not in q:
                return self.reply(400, "missing " + k)
        if not NAME_RE.match(q["name"][0]):
            return self.reply(400, "bad name " + q["name"][0])
        try:
            t0, t1 = int(q["from"][0]), int(q["until"][0])
        except ValueError:
            return self.reply(400, "from/until must be UNIX seconds")
        if t1 < t0 or abs(time.time() - t1) > 7 * 86400:
            return self.reply(400, "bad time range")
        fmt = q.get("format", ["folded"])[0]
        ctype = self.headers.get("Content-Type", "")
        if fmt == "pprof":
            if ctype.startswith("multipart/form-data"):
                data = multipart_field(body, ctype, "profile")
                if data is None:
                    return self.reply(400, "no form field 'profile'")
            else:
                data = body
            if data[:2] != b"\x1f\x8b":
                return self.reply(400, "profile is not gzip-compressed pprof")
        elif fmt == "folded":
            data = body
            for line in data.decode("utf-8", "replace").splitlines():
                if not re.match(r"^.+ \d+$", line):
                    return self.reply(400, "bad folded line: " + line[:80])
        else:
            return self.reply(400, "unsupported format " + fmt)
        with lock:
            i = state["n"]
            state["n"] += 1
            base = os.path.join(args.store, "%04d" % i)
            with open(base + "." + fmt + ".tmp", "wb") as f:
                f.write(data)
            with open(base + ".query", "w") as f:
                f.write(u.query + "\n")
                f.write("auth=" + (auth.split(" ")[0] if auth else "none") + "\n")
            os.rename(base + "." + fmt + ".tmp", base + "." + fmt)
        self.reply(200, "")


def store(fmt, data, meta):
    with lock:
        i = state["n"]
        state["n"] += 1
        base = os.path.join(args.store, "%04d" % i)
        with open(base + "." + fmt + ".tmp", "wb") as f:
            f.write(data)
        with open(base + ".query", "w") as f:
            f.write(meta)
        os.rename(base + "." + fmt + ".tmp", base + "." + fmt)


def writeraw(self, body, auth):
    if not self.headers.get("Content-Type", "").startswith("application/json"):
        return self.reply(415, "want application/json")
    try:
        req = json.loads(body)
        profiles = []
        for series in req["series"]:
            labels = {l["name"]: l["value"] for l in series["labels"]["labels"]}
            if not labels.get("__name__"):
                return self.reply(400, "no __name__ label")
            for smp in series["samples"]:
                raw = base64.b64decode(smp["rawProfile"], validate=True)
                if raw[:2] != b"\x1f\x8b":
                    return self.reply(400, "rawProfile is not gzip-compressed pprof")
                profiles.append((labels, raw))
    except (ValueError, KeyError, TypeError) as e:
        return self.reply(400, "bad WriteRawRequest: %s" % e)
    if not profiles:
        return self.reply(400, "no profile")
    for labels, raw in profiles:
        meta = "labels=" + ",".join("%s=%s" % kv for kv in sorted(labels.items())) + "\n"
        meta += "auth=" + (auth.split(" ")[0] if auth else "none") + "\n"
        store("pprof", raw, meta)
    self.reply(200, "{}")


H.writeraw = writeraw
srv = HTTPServer(("127.0.0.1", args.port), H)
if args.tls:
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.tls[0], args.tls[1])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
tmp = args.port_file + ".tmp"
with open(tmp, "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(tmp, args.port_file)
threading.Timer(args.lifetime, srv.shutdown).start()
srv.serve_forever()
