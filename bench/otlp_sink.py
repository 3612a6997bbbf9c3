"""bench/otlp_sink.py: a stand-in OTLP/HTTP receiver for bench/ingest.sh.

Answers 200 to every POST (the exporter's /v1/traces batches) and counts
requests and bytes into the file named by its second argument, so a run
with TELEMETRY=on can show that traces were really exported.
Usage: python3 bench/otlp_sink.py <port> <count file>
"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, COUNT_FILE = int(sys.argv[1]), sys.argv[2]
seen = {"requests": 0, "bytes": 0}


class Sink(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        seen["requests"] += 1
        seen["bytes"] += len(body)
        with open(COUNT_FILE, "w") as f:
            f.write(f"{seen['requests']} {seen['bytes']}\n")
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", PORT), Sink).serve_forever()
