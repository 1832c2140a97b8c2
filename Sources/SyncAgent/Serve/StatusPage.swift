// Built with the package trait HTTP (a default trait).
#if HTTP
    import Foundation
    import HTTPTypes
    import Hummingbird

    /// `GET /`: the live status page of `sync-agent serve` — one self-contained HTML document (its
    /// style and script inline, nothing fetched from elsewhere).
    ///
    /// The page reads what any client reads: `/v1/status` (the store, the ledger, the hub and its
    /// peers, each consumer and its lag, the inboxes, the objects), `/v1/latency` (commit → merged
    /// latency in this process over the last minutes, plotted) and `/v1/changes` (the change stream:
    /// each transaction is listed as it arrives, and makes the page read the other two again). It
    /// resumes the stream after the last event it saw, like any client.
    ///
    /// The page itself holds no data, so it is served without a token; when `serve` requires one, the
    /// page asks for it (or takes it from the address: `http://HOST:PORT/#token=TOKEN`) and sends it
    /// as a bearer token with every request. It is kept in the tab's session storage only.
    enum StatusPage {
        /// The page, as `text/html`.
        static func response() -> Response {
            var headers = HTTPFields()
            headers[.contentType] = "text/html; charset=utf-8"
            headers[.cacheControl] = "no-cache"
            headers[HTTPField.Name("Content-Security-Policy")!] =
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'"
            headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
        }

        static let html = #"""
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Ambar — status</title>
            <style>
              :root { --fg: #1d2430; --muted: #667085; --line: #e4e7ec; --card: #ffffff; --bg: #f5f6f8; --accent: #c2410c; --ok: #15803d; --bad: #b42318; }
              * { box-sizing: border-box; }
              body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
              header { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; padding: 14px 24px; background: var(--card); border-bottom: 1px solid var(--line); }
              header h1 { margin: 0; font-size: 18px; color: var(--accent); }
              header .store { color: var(--muted); font-family: ui-monospace, monospace; font-size: 12px; overflow-wrap: anywhere; }
              #connection { margin-left: auto; font-size: 12px; padding: 2px 10px; border-radius: 10px; background: #fef3f2; color: var(--bad); }
              #connection.live { background: #ecfdf3; color: var(--ok); }
              main { display: grid; grid-template-columns: repeat(auto-fit, minmax(330px, 1fr)); gap: 16px; padding: 16px 24px; }
              section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; min-width: 0; }
              section.wide { grid-column: 1 / -1; }
              h2 { margin: 0 0 8px; font-size: 13px; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); }
              .figures { display: flex; gap: 24px; flex-wrap: wrap; }
              .figure b { display: block; font-size: 22px; font-variant-numeric: tabular-nums; }
              .figure span { color: var(--muted); font-size: 12px; }
              table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
              th, td { text-align: left; padding: 3px 8px 3px 0; border-bottom: 1px solid var(--line); vertical-align: top; }
              th { font-weight: 600; color: var(--muted); font-size: 12px; }
              td.num, th.num { text-align: right; }
              td.mono { font-family: ui-monospace, monospace; font-size: 12px; overflow-wrap: break-word; }
              .behind { color: var(--accent); font-weight: 600; }
              .failed { color: var(--bad); font-weight: 600; }
              .empty { color: var(--muted); font-style: italic; }
              .note { color: var(--muted); font-size: 12px; margin-top: 6px; }
              #plot { width: 100%; height: 180px; display: block; }
              #plot .axis { stroke: var(--line); }
              #plot .label { fill: var(--muted); font-size: 10px; }
              #plot circle { fill: var(--accent); fill-opacity: .75; }
              #token-form { display: none; gap: 8px; align-items: center; padding: 12px 24px; background: #fffaeb; border-bottom: 1px solid var(--line); }
              #token-form.shown { display: flex; }
              #error { display: none; padding: 8px 24px; background: #fef3f2; color: var(--bad); }
              #error.shown { display: block; }
            </style>
            </head>
            <body>
            <header>
              <h1>Ambar</h1>
              <span class="store" id="store">…</span>
              <span id="connection">connecting</span>
            </header>
            <form id="token-form">
              <label for="token-input">This server requires a bearer token:</label>
              <input id="token-input" type="password" autocomplete="off" size="40">
              <button type="submit">Use it</button>
            </form>
            <div id="error"></div>
            <main>
              <section>
                <h2>Ledger</h2>
                <div class="figures">
                  <div class="figure"><b id="head-token">–</b><span>head token</span></div>
                  <div class="figure"><b id="oldest-token">–</b><span>oldest kept</span></div>
                  <div class="figure"><b id="ledger-transactions">–</b><span>transactions kept</span></div>
                  <div class="figure"><b id="purged-through">–</b><span>purged through</span></div>
                </div>
                <div class="note" id="backend"></div>
              </section>
              <section>
                <h2>Hub</h2>
                <div class="figures">
                  <div class="figure"><b id="hub-state">–</b><span id="hub-detail">hub</span></div>
                  <div class="figure"><b id="peer-count">–</b><span>peers</span></div>
                </div>
                <table><thead><tr><th>pid</th><th>process</th><th class="num">last token</th><th class="num">ledger cursor</th></tr></thead>
                <tbody id="peers"></tbody></table>
              </section>
              <section>
                <h2>Objects</h2>
                <div class="figures"><div class="figure"><b id="objects-total">–</b><span>objects</span></div></div>
                <table><thead><tr><th>entity</th><th class="num">objects</th></tr></thead><tbody id="objects"></tbody></table>
              </section>
              <section class="wide">
                <h2>Commit → merged latency in this process</h2>
                <svg id="plot" viewBox="0 0 800 180" role="img" aria-label="commit to merged latency"></svg>
                <div class="note" id="latency-summary">no merges yet</div>
              </section>
              <section>
                <h2>Consumers</h2>
                <table><thead><tr><th>consumer</th><th>kind</th><th class="num">token</th><th class="num">behind</th><th class="num">lag</th></tr></thead>
                <tbody id="consumers"></tbody></table>
              </section>
              <section>
                <h2>Inboxes</h2>
                <table><thead><tr><th>agent</th><th class="num">waiting</th><th class="num">imported</th><th class="num">failed</th><th>last failed</th></tr></thead>
                <tbody id="inboxes"></tbody></table>
              </section>
              <section class="wide">
                <h2>Transactions, as they commit</h2>
                <table><thead><tr><th class="num">token</th><th>received</th><th>author</th><th class="num">pid</th><th class="num">inserted</th>
                <th class="num">updated</th><th class="num">deleted</th><th class="num">latency</th></tr></thead>
                <tbody id="transactions"><tr><td colspan="8" class="empty">waiting for the next transaction…</td></tr></tbody></table>
              </section>
            </main>
            <script>
            "use strict";
            const $ = (id) => document.getElementById(id);
            const hash = new URLSearchParams(location.hash.slice(1));
            let bearer = hash.get("token") || sessionStorage.getItem("ambar-token") || "";
            if (hash.get("token")) { sessionStorage.setItem("ambar-token", bearer); history.replaceState(null, "", location.pathname); }
            let lastEventId = null, latency = { points: [], window_seconds: 600 }, seen = 0, refreshTimer = null;

            function headers(extra) {
              const result = Object.assign({}, extra || {});
              if (bearer) result["Authorization"] = "Bearer " + bearer;
              return result;
            }
            function askForToken() { $("token-form").classList.add("shown"); setConnection("token required", false); }
            $("token-form").addEventListener("submit", (event) => {
              event.preventDefault();
              bearer = $("token-input").value.trim();
              sessionStorage.setItem("ambar-token", bearer);
              $("token-form").classList.remove("shown");
              refresh(); startStream();
            });
            function showError(message) { $("error").textContent = message || ""; $("error").classList.toggle("shown", !!message); }
            function setConnection(text, live) { $("connection").textContent = text; $("connection").classList.toggle("live", live); }
            async function getJSON(path) {
              const response = await fetch(path, { headers: headers(), cache: "no-store" });
              if (response.status === 401) { askForToken(); throw new Error("a bearer token is required"); }
              if (!response.ok) throw new Error(path + " answered " + response.status);
              return response.json();
            }
            function cell(text, className) {
              const td = document.createElement("td");
              td.textContent = text;
              if (className) td.className = className;
              return td;
            }
            function rows(tbody, items, columns, emptyText) {
              tbody.replaceChildren();
              if (!items.length) {
                const tr = document.createElement("tr");
                const td = cell(emptyText, "empty");
                td.colSpan = 8;
                tr.append(td);
                tbody.append(tr);
                return;
              }
              for (const item of items) {
                const tr = document.createElement("tr");
                for (const column of columns(item)) tr.append(cell(String(column[0]), column[1]));
                tbody.append(tr);
              }
            }
            function seconds(value) {
              if (value < 1) return Math.round(value * 1000) + " ms";
              if (value < 120) return value.toFixed(1) + " s";
              if (value < 7200) return Math.round(value / 60) + " min";
              return Math.round(value / 3600) + " h";
            }
            function milliseconds(value) { return value < 10 ? value.toFixed(2) + " ms" : value < 1000 ? Math.round(value) + " ms" : (value / 1000).toFixed(1) + " s"; }

            function renderStatus(status) {
              $("store").textContent = status.store + "  ·  " + status.uuid;
              $("head-token").textContent = Math.max(status.head_token, seen);
              $("oldest-token").textContent = status.history.oldest_token ?? "–";
              $("ledger-transactions").textContent = status.history.transactions;
              $("purged-through").textContent = status.history.purged_through;
              $("backend").textContent = status.server
                ? "PostgreSQL " + status.server.version + " · " + status.server.listeners + " listening host(s) · notification queue "
                  + (status.server.notification_queue_usage * 100).toFixed(1) + "% used"
                : "SQLite · " + status.size + " bytes, write-ahead log " + status.wal_size + " bytes";
              const hub = status.hub;
              $("hub-state").textContent = hub.reachable ? "up" : hub.refused ? "refused" : "down";
              $("hub-state").className = hub.reachable ? "" : "failed";
              $("hub-detail").textContent = hub.reachable ? "pid " + hub.pid + " · " + hub.socket : hub.refused || hub.socket + " (processes poll the ledger)";
              $("peer-count").textContent = hub.reachable ? hub.peer_count : "–";
              rows($("peers"), hub.peers || [], (p) => [[p.pid, "num"], [p.name, "mono"], [p.last_token, "num"], [p.ledger_cursor ?? "–", "num"]], "no peers");
              const entities = Object.keys(status.objects).sort();
              $("objects-total").textContent = entities.reduce((sum, name) => sum + status.objects[name], 0);
              rows($("objects"), entities, (name) => [[name], [status.objects[name], "num"]], "no entities");
              rows($("consumers"), status.cursors, (c) => [[c.consumer, "mono"], [c.kind], [c.token, "num"],
                [c.lag_tokens, c.lag_tokens > 0 ? "num behind" : "num"],
                c.expired ? ["history purged", "num failed"] : [c.lag_tokens > 0 ? seconds(c.lag_seconds) : "–", "num"]], "no consumers");
              rows($("inboxes"), status.inboxes || [], (i) => [[i.name, "mono"], [i.waiting, "num"], [i.processed, "num"],
                [i.failed, i.failed > 0 ? "num failed" : "num"],
                i.error ? [i.error, "failed"] : [i.last_failed ?? "–", "mono"]], "no inboxes");
            }

            function renderLatency() {
              const svg = $("plot"), now = Date.now() / 1000, span = 300, height = 180, left = 52, bottom = 20;
              const width = Math.max(320, Math.round(svg.clientWidth || 800));  // drawn at the element's own size: no stretching
              svg.setAttribute("viewBox", "0 0 " + width + " " + height);
              const points = latency.points.filter((p) => p.at >= now - span);
              const values = points.map((p) => p.latency_ms).sort((a, b) => a - b);
              const top = Math.max(10, values.length ? values[Math.min(values.length - 1, Math.floor(values.length * 0.99))] * 1.2 : 10);
              const ns = "http://www.w3.org/2000/svg";
              const element = (name, attributes, text) => {
                const node = document.createElementNS(ns, name);
                for (const key in attributes) node.setAttribute(key, attributes[key]);
                if (text !== undefined) node.textContent = text;
                return node;
              };
              svg.replaceChildren();
              for (const fraction of [0, 0.5, 1]) {
                const y = (height - bottom) * (1 - fraction) + 2;
                svg.append(element("line", { x1: left, x2: width, y1: y, y2: y, class: "axis" }));
                svg.append(element("text", { x: 2, y: y + 4, class: "label" }, milliseconds(top * fraction)));
              }
              for (const minutes of [5, 4, 3, 2, 1, 0]) {
                const x = left + (width - left) * (1 - minutes * 60 / span);
                svg.append(element("text", { x: Math.min(x, width - 30), y: height - 4, class: "label" }, minutes ? "-" + minutes + " min" : "now"));
              }
              for (const p of points) {
                const x = left + (width - left) * (1 - (now - p.at) / span);
                const y = (height - bottom) * (1 - Math.min(p.latency_ms, top) / top) + 2;
                svg.append(element("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: 2.5 }));
              }
              const quantile = (q) => values[Math.min(values.length - 1, Math.floor(values.length * q))];
              $("latency-summary").textContent = values.length
                ? values.length + " merge(s) in the last 5 minutes · median " + milliseconds(quantile(0.5)) + " · p95 " + milliseconds(quantile(0.95))
                  + " · max " + milliseconds(values[values.length - 1])
                : "no merges from other processes in the last 5 minutes";
              $("latency-summary").dataset.count = values.length;
            }

            async function refresh() {
              try {
                const [status, merges] = await Promise.all([getJSON("/v1/status"), getJSON("/v1/latency")]);
                renderStatus(status);
                latency = merges;
                renderLatency();
                showError("");
              } catch (error) {
                showError("Could not read the status: " + error.message);
              }
            }
            function refreshSoon() {
              if (refreshTimer) return;
              refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, 250);  // at most 4 reads a second, however fast the store commits
            }

            function addTransaction(t) {
              seen = Math.max(seen, t.token);
              $("head-token").textContent = seen;
              const tbody = $("transactions");
              if (tbody.querySelector(".empty")) tbody.replaceChildren();
              const tr = document.createElement("tr");
              for (const column of [[t.token, "num"], [new Date().toTimeString().slice(0, 8)], [t.author ?? "–", "mono"], [t.pid, "num"],
                [t.inserted.length, "num"], [t.updated.length, "num"], [t.deleted.length, "num"], [milliseconds(t.latency_ms), "num"]]) {
                tr.append(cell(String(column[0]), column[1]));
              }
              tbody.prepend(tr);
              while (tbody.children.length > 25) tbody.lastElementChild.remove();
              refreshSoon();
            }

            function handleEvent(block) {
              let id = null, type = "message";
              const data = [];
              for (const line of block.split("\n")) {
                if (!line || line.startsWith(":")) continue;
                const colon = line.indexOf(":");
                const field = colon < 0 ? line : line.slice(0, colon);
                let value = colon < 0 ? "" : line.slice(colon + 1);
                if (value.startsWith(" ")) value = value.slice(1);
                if (field === "id") id = value;
                else if (field === "event") type = value;
                else if (field === "data") data.push(value);
              }
              // The position moves with every id, an event without data too (as EventSource's).
              if (id !== null) lastEventId = id;
              if (!data.length) return;
              const payload = JSON.parse(data.join("\n"));
              if (type === "expired") {
                lastEventId = null;  // the history after our position was purged: start again at the head
                showError("The page fell behind the ledger's retention (purged through " + payload.purged_through + "); it continues from the head.");
                return;
              }
              addTransaction(payload);
            }

            let streaming = false;
            async function startStream() {
              if (streaming) return;
              streaming = true;
              while (true) {
                try {
                  const extra = { "Accept": "text/event-stream" };
                  if (lastEventId !== null) extra["Last-Event-ID"] = lastEventId;
                  const response = await fetch("/v1/changes", { headers: headers(extra), cache: "no-store" });
                  if (response.status === 401) { askForToken(); break; }
                  if (response.status === 410) {
                    // The history after our position was purged while the page was away.
                    const gone = await response.json();
                    lastEventId = null;
                    showError("The page fell behind the ledger's retention (purged through " + gone.purged_through + "); it continues from the head.");
                    continue;
                  }
                  if (!response.ok || !response.body) throw new Error("the change stream answered " + response.status);
                  setConnection("live", true);
                  refresh();
                  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
                  let buffer = "";
                  while (true) {
                    const { value, done } = await reader.read();
                    if (done) break;
                    buffer += value.replace(/\r\n?/g, "\n");
                    let end;
                    while ((end = buffer.indexOf("\n\n")) >= 0) {
                      handleEvent(buffer.slice(0, end));
                      buffer = buffer.slice(end + 2);
                    }
                  }
                } catch (error) {
                  showError("The change stream was interrupted: " + error.message);
                }
                setConnection("reconnecting", false);
                await new Promise((resolve) => setTimeout(resolve, 2000));
              }
              streaming = false;
            }

            refresh();
            startStream();
            setInterval(refresh, 5000);
            setInterval(renderLatency, 1000);
            </script>
            </body>
            </html>
            """#
    }
#endif
