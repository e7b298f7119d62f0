(function () {
  "use strict";
  var root = document.getElementById("pay");
  if (!root || !root.dataset.statusUrl) { return; }
  var statusEl = document.getElementById("status");
  var charge = document.getElementById("charge");
  var countdown = document.getElementById("countdown");
  var codeEl = document.getElementById("code");
  var copyBtn = document.getElementById("copy");
  var copyResult = document.getElementById("copy-result");
  var hasPix = root.dataset.hasPix === "true";
  var status = root.dataset.status;
  var started = Date.now();
  var expiresInMs = parseInt(root.dataset.expiresInMs, 10);
  var finished = false;
  var source = null;
  var pollTimer = null;

  function label(key) { return root.dataset["l" + key.charAt(0).toUpperCase() + key.slice(1)] || key; }
  function remaining() { return expiresInMs - (Date.now() - started); }

  // The state the page shows, from the transaction's status. A charge awaiting payment past
  // its expiry reads "expired" before the server's sweeper fails it; FAILED after a QR code
  // existed can only be an expiry.
  function stateOf(s) {
    switch (s) {
      case "PIX_QRCODE_GENERATED": return hasPix && remaining() <= 0 ? "expired" : "awaiting";
      case "PAID": return "paid";
      case "FAILED": return hasPix ? "expired" : "failed";
      case "PROCESSING_REFUND": return "refunding";
      case "REFUNDED": return "refunded";
      case "BLOCKED": return "review";
      case "PROCESSING_INFRACTION": return "returning";
      case "INFRACTION": return "returned";
      default: return "pending";
    }
  }
  var finalStates = { REFUNDED: true, INFRACTION: true, FAILED: true };

  function render() {
    var state = stateOf(status);
    if (statusEl.dataset.state !== state) {
      statusEl.dataset.state = state;
      statusEl.className = "status s-" + state;
      statusEl.textContent = label(state);
    }
    if (charge && charge.hidden !== (state !== "awaiting")) {
      charge.hidden = state !== "awaiting";
      fitCode();
    }
    if (finalStates[status]) { stop(); }
  }

  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function tick() {
    if (!countdown) { return; }
    var s = Math.max(0, Math.ceil(remaining() / 1000));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    countdown.textContent = (h > 0 ? h + ":" + pad(m) : pad(m)) + ":" + pad(sec);
    render();
  }

  function apply(body) {
    if (body && typeof body.status === "string") {
      status = body.status;
      render();
    }
  }

  function stop() {
    finished = true;
    if (source) { source.close(); source = null; }
    if (pollTimer) { clearInterval(pollTimer); pollTimer = null; }
  }

  // Polling the status route is the fallback when the live channel is refused or unsupported.
  function poll() {
    if (pollTimer || finished) { return; }
    pollTimer = setInterval(function () {
      fetch(root.dataset.statusUrl, { cache: "no-store", credentials: "omit", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(apply)
        .catch(function () {});
    }, 2000);
  }

  function listen() {
    if (!window.EventSource) { poll(); return; }
    source = new EventSource(root.dataset.eventsUrl);
    source.onmessage = function (e) {
      try { apply(JSON.parse(e.data)); } catch (err) { /* ignore a broken message */ }
    };
    source.addEventListener("end", function () { stop(); });
    source.onerror = function () {
      // EventSource retries by itself while it can; once it gives up (429, 404), poll.
      if (source && source.readyState === EventSource.CLOSED) { source = null; poll(); }
    };
  }

  function copied(ok) {
    copyResult.textContent = label(ok ? "copied" : "copyFailed");
    if (!ok) { codeEl.focus(); codeEl.select(); }
  }
  function legacyCopy() {
    codeEl.focus();
    codeEl.select();
    codeEl.setSelectionRange(0, codeEl.value.length);
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (err) { ok = false; }
    copied(ok);
  }
  // The code box grows to show the whole code, so that nothing in it scrolls: at the page's
  // width, and again whenever that changes (a phone turned sideways). CSS field-sizing does the
  // same where the browser has it.
  function fitCode() {
    if (!codeEl || !charge || charge.hidden) { return; }
    codeEl.style.height = "auto";
    codeEl.style.height = (codeEl.scrollHeight + codeEl.offsetHeight - codeEl.clientHeight) + "px";
  }
  window.addEventListener("resize", fitCode);

  if (copyBtn && codeEl) {
    copyBtn.addEventListener("click", function () {
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(codeEl.value).then(function () { copied(true); }, legacyCopy);
      } else {
        legacyCopy();
      }
    });
  }

  render();
  fitCode();
  if (!finished) {
    tick();
    setInterval(tick, 1000);
    listen();
  }
})();
