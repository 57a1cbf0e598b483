import { NAMED_KEYS } from '../../contracts/schemas/message.schema';
import { keyInput, toContractPoint } from './input-mapping';

/** Content-Security-Policy of the page: everything is inline or from this origin. */
export const VIEW_PAGE_CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'";

/** JSON that can sit inside a <script> element. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The live view of one session: the screen (an MJPEG <img> scaled to the window), a
 * "Take over" / "Release" button and the session's events. While taken over, clicks and
 * keys on the screen become interaction messages over the session's socket.
 * Self-contained: no external assets but the Socket.IO client the server itself serves.
 */
export function renderViewPage(opts: { sessionId: string; token: string; control?: { manual: boolean; asleep?: boolean; seq: number } }): string {
  const config = {
    sessionId: opts.sessionId,
    /** Who held the browser when the page was served, and the event seq that state includes. */
    manual: opts.control?.manual === true,
    /** The session was hibernated (waiting for an answer without a browser). */
    asleep: opts.control?.asleep === true,
    controlSeq: opts.control?.seq ?? 0,
    streamUrl: `/view/${encodeURIComponent(opts.sessionId)}/stream?token=${encodeURIComponent(opts.token)}`,
    namedKeys: NAMED_KEYS,
  };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Live session ${escapeHtml(opts.sessionId)}</title>
<style>
  * { box-sizing: border-box; }
  html, body { margin: 0; height: 100%; background: #0f1115; color: #d8dee9; font: 13px/1.4 system-ui, sans-serif; }
  body { display: flex; flex-direction: column; }
  header { display: flex; align-items: center; gap: 12px; padding: 8px 12px; background: #171a21; border-bottom: 1px solid #262b36; }
  header .id { font-family: ui-monospace, monospace; opacity: .6; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  #status { margin-left: auto; opacity: .8; }
  button { font: inherit; padding: 5px 14px; border-radius: 4px; border: 1px solid #4c566a; background: #2e3440; color: inherit; cursor: pointer; }
  button:disabled { opacity: .5; cursor: default; }
  body.taken #takeover { background: #bf616a; border-color: #bf616a; color: #fff; }
  main { flex: 1; display: flex; min-height: 0; }
  #stage { flex: 1; min-width: 0; padding: 8px; display: flex; }
  #asleep { margin: auto; max-width: 32em; text-align: center; color: #d8dee9; }
  /* object-fit keeps the 1024:600 picture whole; the click mapping accounts for the bars. */
  #screen { display: block; width: 100%; height: 100%; object-fit: contain; background: #000; user-select: none; -webkit-user-drag: none; }
  body.taken #screen { cursor: crosshair; outline: 2px solid #bf616a; }
  body.ended #screen { opacity: .5; }
  aside { width: 360px; display: flex; flex-direction: column; border-left: 1px solid #262b36; min-height: 0; }
  aside h2 { font-size: 11px; text-transform: uppercase; letter-spacing: .06em; margin: 0; padding: 8px 10px; opacity: .6; }
  #log { flex: 1; overflow: auto; padding: 0 10px 10px; font-family: ui-monospace, monospace; font-size: 12px; }
  .entry { padding: 3px 0; border-bottom: 1px solid #1d2129; white-space: pre-wrap; word-break: break-word; }
  .entry time { opacity: .45; margin-right: 6px; }
  .entry b { margin-right: 6px; font-weight: 600; }
  .agent b { color: #88c0d0; } .action b { color: #a3be8c; } .response_update b { color: #ebcb8b; }
  .task_completed b { color: #a3be8c; } .guardrail_trigger b { color: #d08770; } .error b { color: #bf616a; }
  .end_session b, .connection b { color: #b48ead; }
  @media (max-width: 800px) { main { flex-direction: column; } aside { width: auto; height: 35vh; border-left: 0; border-top: 1px solid #262b36; } }
</style>
</head>
<body>
<header>
  <strong>Live session</strong>
  <span class="id">${escapeHtml(opts.sessionId)}</span>
  <span id="status">connecting…</span>
  <button id="takeover" type="button" aria-pressed="false">Take over</button>
</header>
<main>
  <div id="stage"><img id="screen" alt="Live screen of the session" draggable="false"><p id="asleep" hidden>The session is asleep: it waits for an answer without a browser. Answer the question, or wake it to take over.</p></div>
  <aside><h2>Events</h2><div id="log" role="log" aria-live="polite"></div></aside>
</main>
<script src="/socket.io/socket.io.js"></script>
<script>
(function () {
  'use strict';
  var config = ${scriptJson(config)};
  var toContractPoint = ${toContractPoint.toString()};
  var keyInput = ${keyInput.toString()};

  var screen = document.getElementById('screen');
  var button = document.getElementById('takeover');
  var log = document.getElementById('log');
  var statusEl = document.getElementById('status');
  var taken = false;
  var ended = false;
  var lastSeq = 0;

  // Each entry is dated by the event's own time (a replayed event by when it happened, not
  // when it arrived); the page's own entries (connected, disconnected) by now.
  function addLog(kind, text, at) {
    var atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
    var row = document.createElement('div');
    row.className = 'entry ' + kind;
    row.setAttribute('data-type', kind);
    var time = document.createElement('time');
    var when = typeof at === 'number' && isFinite(at) ? new Date(at) : new Date();
    time.textContent = when.toLocaleTimeString();
    time.setAttribute('datetime', when.toISOString());
    var label = document.createElement('b');
    label.textContent = kind;
    row.appendChild(time);
    row.appendChild(label);
    row.appendChild(document.createTextNode(text));
    log.appendChild(row);
    while (log.childNodes.length > 1000) log.removeChild(log.firstChild);
    if (atBottom) log.scrollTop = log.scrollHeight;
  }

  function describe(m) {
    var d = m.data || {};
    switch (m.type) {
      case 'agent': return String(m.content);
      case 'action': return d.name + (d.target ? ' ' + d.target : '');
      case 'response_update': return String(d.message);
      case 'task_completed': return String(d.message);
      case 'guardrail_trigger': return d.type + ': ' + d.value;
      case 'error': return (m.code ? m.code + ': ' : '') + m.error;
      case 'session_hibernated': return String(d.message);
      case 'session_resumed': return String(d.message);
      default: return JSON.stringify(m);
    }
  }

  // Asleep (hibernated): no screen; the button wakes the session and takes over.
  var asleepNote = document.getElementById('asleep');
  var asleep = false;
  function setAsleep(value) {
    asleep = value;
    asleepNote.hidden = !value;
    screen.hidden = value;
    document.body.classList.toggle('asleep', value);
    if (!ended) statusEl.textContent = value ? 'asleep' : 'live';
    if (!taken) button.textContent = value ? 'Wake and take over' : 'Take over';
    if (!value && !ended) startStream();
  }

  function setTaken(value) {
    taken = value;
    button.textContent = value ? 'Release' : asleep ? 'Wake and take over' : 'Take over';
    button.setAttribute('aria-pressed', String(value));
    document.body.classList.toggle('taken', value);
  }

  setTaken(config.manual);

  function endView(text) {
    if (ended) return;
    ended = true;
    setTaken(false);
    button.disabled = true;
    statusEl.textContent = text;
    document.body.classList.add('ended');
  }

  // ---- the screen ----
  function startStream() { screen.src = config.streamUrl + '&t=' + Date.now(); }
  screen.addEventListener('error', function () { if (!ended) setTimeout(startStream, 2000); });
  screen.addEventListener('dragstart', function (e) { e.preventDefault(); });
  startStream();
  if (config.asleep) setAsleep(true);

  if (typeof io !== 'function') {
    addLog('error', 'the live channel is not available');
    button.disabled = true;
    return;
  }

  // ---- the session's events; lastSeq makes a reconnect replay only what was missed ----
  var socket = io({ auth: { sessionId: config.sessionId, lastSeq: 0 }, transports: ['websocket'] });
  function fresh(m) {
    if (!m || typeof m.seq !== 'number') return true;
    if (m.seq <= lastSeq) return false;
    lastSeq = m.seq;
    socket.auth.lastSeq = lastSeq;
    return true;
  }
  socket.on('connect', function () { if (!ended) statusEl.textContent = asleep ? 'asleep' : 'live'; addLog('connection', 'connected'); });
  socket.on('disconnect', function (reason) { if (!ended) statusEl.textContent = 'reconnecting…'; addLog('connection', 'disconnected (' + reason + ')'); });
  socket.on('connect_error', function (err) {
    addLog('error', err.message);
    if (/ended|not found/i.test(err.message)) { socket.disconnect(); endView('session ended'); }
  });
  socket.on('message', function (m) {
    if (!fresh(m)) return;
    addLog(m.type || 'message', describe(m), m.timestamp);
    // Control taken or released (through the API, a socket or another viewer): follow it.
    if (m.type === 'session_hibernated') setAsleep(true);
    if (m.type === 'session_resumed') setAsleep(false);
    var control = m.type === 'response_update' && m.data && m.data.control;
    if (control && !ended && m.seq > config.controlSeq) setTaken(control === 'manual');
  });
  socket.on('error', function (e) { addLog('error', (e && e.code ? e.code + ': ' : '') + (e && (e.message || e.error)), e && e.timestamp); });
  socket.on('end_session', function (m) {
    if (!fresh(m)) return;
    addLog('end_session', 'session ended: ' + (m && m.reason), m && m.timestamp);
    endView('session ended (' + (m && m.reason) + ')');
  });
  socket.on('instance:disconnected', function (m) { if (fresh(m)) addLog('connection', 'browser instance lost; waiting for it to be restored', m && m.timestamp); });
  socket.on('instance:reconnected', function (m) { if (fresh(m)) addLog('connection', 'browser instance restored', m && m.timestamp); });

  // ---- manual control; actions go out one at a time, in order ----
  var queue = Promise.resolve();
  function send(action) {
    queue = queue.then(function () {
      return new Promise(function (resolve) {
        socket.timeout(30000).emit('message', { actionType: 'interaction', action: action }, function (err, ack) {
          if (err) addLog('error', action.type + ': no answer');
          else if (!ack || ack.success === false) addLog('error', action.type + ': ' + (ack && (ack.message || ack.error)));
          resolve(err ? null : ack);
        });
      });
    });
    return queue;
  }

  var pendingClick = null;
  var clickTimer = null;
  function flushClick() {
    clearTimeout(clickTimer);
    clickTimer = null;
    if (pendingClick) send(pendingClick);
    pendingClick = null;
  }
  var text = '';
  var textTimer = null;
  function flushText() {
    clearTimeout(textTimer);
    textTimer = null;
    if (text) send({ type: 'TYPE', text: text });
    text = '';
  }

  button.addEventListener('click', function () {
    button.blur();
    if (ended) return;
    flushClick();
    flushText();
    var take = !taken;
    button.disabled = true;
    send({ type: take ? 'takeOverControl' : 'releaseControl' }).then(function (ack) {
      if (!ended) button.disabled = false;
      if (ack && ack.success) setTaken(take);
    });
  });

  // A double click first arrives as a click: it waits briefly so one DOUBLE_CLICK goes out, not CLICK, CLICK, DOUBLE_CLICK.
  screen.addEventListener('click', function (e) {
    if (!taken) return;
    var p = toContractPoint(e.clientX, e.clientY, screen.getBoundingClientRect());
    if (!p) return;
    flushText();
    if (e.detail === 2) {
      clearTimeout(clickTimer);
      clickTimer = null;
      pendingClick = null;
      send({ type: 'DOUBLE_CLICK', x: p.x, y: p.y });
      return;
    }
    if (e.detail > 2) return;
    flushClick();
    pendingClick = { type: 'CLICK', x: p.x, y: p.y };
    clickTimer = setTimeout(flushClick, 250);
  });

  // Characters are batched into one TYPE; a named key or a click sends what was typed first.
  window.addEventListener('keydown', function (e) {
    if (!taken || ended) return;
    var input = keyInput(e, config.namedKeys);
    if (!input) return;
    e.preventDefault();
    flushClick();
    if (input.type === 'TYPE') {
      text += input.text;
      clearTimeout(textTimer);
      textTimer = setTimeout(flushText, 300);
    } else {
      flushText();
      send(input);
    }
  });
  window.addEventListener('paste', function (e) {
    if (!taken || ended || !e.clipboardData) return;
    var pasted = e.clipboardData.getData('text');
    if (!pasted) return;
    e.preventDefault();
    flushClick();
    flushText();
    send({ type: 'TYPE', text: pasted.slice(0, 10000) });
  });
})();
</script>
</body>
</html>
`;
}
