// Keeps /ops current: follows the Server-Sent Events of /ops/feed (one `figures` event a second)
// and writes each figure into the element marked data-f="<path>" in the words the server uses
// (data-fmt), and rebuilds the table of routes (the busiest first, so its rows move). Without this
// script the page shows the figures as of loading it, and says so.
(function () {
  if (!window.EventSource) return;
  var live = document.getElementById('ops-live');
  var basis = document.getElementById('ops-basis');
  var dash = '\u2013';
  var n = function (v, f) { return v === null || v === undefined ? dash : f(v); };
  var FMT = {
    int: function (v) { return n(v, function (x) { return Math.round(x).toLocaleString('en-US'); }); },
    rate: function (v) { return n(v, function (x) { return x >= 100 ? x.toFixed(0) : x.toFixed(2); }); },
    ms: function (v) { return n(v, function (x) { return (x >= 100 ? x.toFixed(0) : x.toFixed(2)) + ' ms'; }); },
    pct: function (v) { return n(v, function (x) { return (x * 100).toFixed(1) + ' %'; }); },
    mb: function (v) { return n(v, function (x) { return (x / 1048576).toFixed(1) + ' MB'; }); },
    seconds: function (v) { return n(v, function (x) { return Math.round(x).toLocaleString('en-US') + ' s'; }); },
    at: function (v) { return n(v, function (x) { return new Date(x * 1000).toISOString().slice(0, 19).replace('T', ' ') + ' UTC'; }); },
    ready: function (v) { return v === null || v === undefined ? dash : v ? 'ready' : 'starting'; },
  };
  function pick(obj, path) {
    var parts = path.split('.');
    for (var i = 0; i < parts.length && obj !== null && obj !== undefined; i++) obj = obj[parts[i]];
    return obj;
  }
  function cell(tag, text, cls) {
    var el = document.createElement(tag);
    el.textContent = text;
    if (cls) el.className = cls;
    return el;
  }
  function routes(list) {
    var body = document.querySelector('#ops-routes tbody');
    if (!body) return;
    var rows = document.createDocumentFragment();
    list.forEach(function (r) {
      var tr = document.createElement('tr');
      var th = cell('th', '');
      th.setAttribute('scope', 'row');
      th.appendChild(cell('code', r.method + ' ' + r.route));
      tr.appendChild(th);
      [FMT.int(r.requests), FMT.rate(r.rate), FMT.ms(r.p50_ms), FMT.ms(r.p99_ms), FMT.int(r.errors_4xx), FMT.int(r.errors_5xx)].forEach(function (t) { tr.appendChild(cell('td', t, 'num')); });
      rows.appendChild(tr);
    });
    if (!list.length) {
      var empty = cell('td', 'No request yet.');
      empty.setAttribute('colspan', '7');
      var tr = document.createElement('tr');
      tr.appendChild(empty);
      rows.appendChild(tr);
    }
    body.replaceChildren(rows);
  }
  function show(f) {
    var els = document.querySelectorAll('[data-f]');
    for (var i = 0; i < els.length; i++) {
      var v = pick(f, els[i].getAttribute('data-f'));
      var fmt = FMT[els[i].getAttribute('data-fmt')] || FMT.int;
      if (v !== undefined) els[i].textContent = fmt(v);
    }
    routes(f.routes || []);
    if (basis) basis.textContent = f.window_s > 0 ? 'over the last ' + f.window_s.toFixed(0) + ' s' : 'since the process started';
    if (live) live.textContent = 'Live: updated every second from pid ' + f.process.pid + ' on ' + f.process.host + '.';
  }
  var feed = new EventSource('/ops/feed');
  feed.addEventListener('figures', function (e) { show(JSON.parse(e.data)); });
  feed.onerror = function () { if (live) live.textContent = 'Live updates paused: reconnecting to the feed.'; };
})();
