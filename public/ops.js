// Keeps /ops current from the Server-Sent Events of /ops/feed: `history` (the charts' points, on
// connecting), `point` (a new one: appended, the oldest dropped past max_points) and `figures` (a
// second's figures: each element marked data-f="<path>" in the words the server uses (data-fmt),
// the status line, the recent 5xx, the routes with traffic and those folded away). Each chart is
// redrawn from its spec (data-chart, written by src/ops/view.ts) the way src/web/charts.ts
// draws it on the server. Without this script the page shows the figures as of loading it, and says so.
(function () {
  if (!window.EventSource) return;
  var live = document.getElementById('ops-live');
  var dash = '\u2013';
  var n = function (v, f) {
    return v === null || v === undefined ? dash : f(v);
  };
  var FMT = {
    int: function (v) {
      return n(v, function (x) {
        return Math.round(x).toLocaleString('en-US');
      });
    },
    rate: function (v) {
      return n(v, function (x) {
        return x >= 100 ? x.toFixed(0) : x.toFixed(2);
      });
    },
    ms: function (v) {
      return n(v, function (x) {
        return (x >= 100 ? x.toFixed(0) : x.toFixed(2)) + ' ms';
      });
    },
    pct: function (v) {
      return n(v, function (x) {
        return (x * 100).toFixed(1) + ' %';
      });
    },
    mb: function (v) {
      return n(v, function (x) {
        return (x / 1048576).toFixed(1) + ' MB';
      });
    },
    seconds: function (v) {
      return n(v, function (x) {
        return Math.round(x).toLocaleString('en-US') + ' s';
      });
    },
    at: function (v) {
      return n(v, function (x) {
        return new Date(x * 1000).toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
      });
    },
    ready: function (v) {
      return v === null || v === undefined ? dash : v ? 'ready' : 'starting';
    },
  };
  function pick(obj, path) {
    var parts = path.split('.');
    for (var i = 0; i < parts.length && obj !== null && obj !== undefined; i++) obj = obj[parts[i]];
    return obj;
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function setText(e, text) {
    if (e && e.textContent !== text) e.textContent = text;
  }

  // Charts: the layout of src/web/charts.ts lineChart (its margins, its tick label room).
  var W = 640,
    H = 220,
    M = { top: 12, right: 28, bottom: 36, left: 68 },
    TICK_CHAR = 10.5;
  var SVG = 'http://www.w3.org/2000/svg';
  var history = null;
  function svg(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function tickStep(lo, hi, count) {
    var step0 = Math.abs(hi - lo) / count;
    var step = Math.pow(10, Math.floor(Math.log10(step0)));
    var err = step0 / step;
    return err >= 7.07 ? step * 10 : err >= 3.16 ? step * 5 : err >= 1.41 ? step * 2 : step;
  }
  /** A round domain around [lo, hi] and its ticks (d3's nice() and ticks(5)). */
  function niceScale(lo, hi) {
    for (var i = 0; i < 10; i++) {
      var s = tickStep(lo, hi, 10);
      var nlo = Math.floor(lo / s) * s,
        nhi = Math.ceil(hi / s) * s;
      if (nlo === lo && nhi === hi) break;
      lo = nlo;
      hi = nhi;
    }
    var step = tickStep(lo, hi, 5),
      ticks = [];
    for (var t = Math.ceil(lo / step); t * step <= hi + step * 1e-9; t++)
      ticks.push(+(t * step).toPrecision(12));
    return { lo: lo, hi: hi, ticks: ticks };
  }
  /** The x axis of the history: seconds before the newest point (src/ops/view.ts historyAxis). */
  function historyAxis(points, pointS) {
    var span = Math.max(1, points - 1) * pointS;
    var steps = [5, 10, 15, 30, 60, 120, 180, 300],
      step = 600,
      ticks = [],
      x = [];
    for (var i = 0; i < steps.length; i++)
      if (span / steps[i] <= 6) {
        step = steps[i];
        break;
      }
    for (var t = 0; t > -span; t -= step) ticks.unshift(t); // none at the left edge, under the y labels
    for (var j = 0; j < points; j++) x.push((j - points + 1) * pointS);
    return {
      x: x,
      ticks: ticks,
      label: function (v) {
        return v === 0 ? 'now' : v % 60 === 0 ? -v / 60 + ' min' : -v + ' s';
      },
    };
  }
  function known(v) {
    return typeof v === 'number' && isFinite(v);
  }
  function drawChart(box, spec) {
    var figure = box.querySelector('figure.chart');
    var old = figure && figure.querySelector('svg');
    if (!old) return;
    var fmt = FMT[spec.fmt] || FMT.rate;
    var axis = historyAxis(history.points.length, history.point_s);
    var series = spec.series.map(function (s) {
      return {
        name: s.name,
        values: history.points.map(function (p) {
          var v = pick(p, s.key);
          return known(v) ? v : null;
        }),
      };
    });
    var all = [];
    series.forEach(function (s) {
      s.values.forEach(function (v) {
        if (v !== null) all.push(v);
      });
    });
    spec.levels.forEach(function (l) {
      all.push(l.y);
    });
    if (all.length) all.push(0); // every figure here is 0 or more: the axis starts at 0 (view.ts yReach)
    var id = box.id,
      out = svg('svg', {
        class: 'chart',
        role: 'img',
        'aria-labelledby': id + '-t ' + id + '-d',
        viewBox: '0 0 ' + W + ' ' + H,
        width: W,
        height: H,
      });
    var summary =
      spec.title +
      ': ' +
      series
        .map(function (s) {
          var k = s.values.filter(function (v) {
            return v !== null;
          });
          if (!k.length) return s.name + ': no data';
          return (
            s.name +
            ' from ' +
            fmt(k[0]) +
            ' to ' +
            fmt(k[k.length - 1]) +
            ' (low ' +
            fmt(Math.min.apply(null, k)) +
            ', high ' +
            fmt(Math.max.apply(null, k)) +
            ')'
          );
        })
        .join('; ') +
      (axis.x.length ? ' over time before now ' + axis.label(axis.x[0]) + ' to now.' : '.');
    spec.levels.forEach(function (l) {
      summary += ' ' + l.label + '.';
    });
    out.appendChild(svg('title', { id: id + '-t' }, spec.title));
    out.appendChild(svg('desc', { id: id + '-d' }, summary));
    if (!all.length || !axis.x.length) {
      out.setAttribute('viewBox', '0 0 ' + W + ' 40');
      out.setAttribute('height', '40');
      out.appendChild(svg('text', { x: 8, y: 24 }, 'No data yet.'));
    } else {
      var lo = Math.min.apply(null, all),
        hi = Math.max.apply(null, all);
      var pad = lo === hi ? Math.max(Math.abs(lo) * 0.1, 1) : 0;
      var ys = niceScale(lo - pad, hi + pad);
      var widest = 0;
      ys.ticks.forEach(function (t) {
        widest = Math.max(widest, fmt(t).length);
      });
      var left = Math.max(M.left, Math.ceil(26 + widest * TICK_CHAR));
      var x0 = axis.x[0],
        x1 = axis.x[axis.x.length - 1];
      if (x0 === x1) {
        x0 -= 1;
        x1 += 1;
      }
      var X = function (v) {
        return left + ((v - x0) / (x1 - x0)) * (W - M.right - left);
      };
      var Y = function (v) {
        return H - M.bottom - ((v - ys.lo) / (ys.hi - ys.lo)) * (H - M.bottom - M.top);
      };
      var gy = svg('g', { class: 'axis y' });
      ys.ticks.forEach(function (t) {
        var py = Y(t).toFixed(1);
        gy.appendChild(
          svg('line', { x1: left, x2: W - M.right, y1: py, y2: py, 'stroke-opacity': '.25' }),
        );
        gy.appendChild(
          svg('text', { x: left - 6, y: py, dy: '.32em', 'text-anchor': 'end' }, fmt(t)),
        );
      });
      gy.appendChild(
        svg(
          'text',
          {
            class: 'axis-title',
            transform: 'translate(12 ' + ((M.top + H - M.bottom) / 2).toFixed(1) + ') rotate(-90)',
            'text-anchor': 'middle',
          },
          spec.yLabel,
        ),
      );
      out.appendChild(gy);
      var gx = svg('g', { class: 'axis x' });
      gx.appendChild(
        svg('line', { x1: left, x2: W - M.right, y1: H - M.bottom, y2: H - M.bottom }),
      );
      axis.ticks.forEach(function (t) {
        if (t >= x0 && t <= x1)
          gx.appendChild(
            svg(
              'text',
              { x: X(t).toFixed(1), y: H - M.bottom + 14, 'text-anchor': 'middle' },
              axis.label(t),
            ),
          );
      });
      gx.appendChild(
        svg(
          'text',
          {
            class: 'axis-title',
            x: ((left + W - M.right) / 2).toFixed(1),
            y: H - 4,
            'text-anchor': 'middle',
          },
          'time before now',
        ),
      );
      out.appendChild(gx);
      series.forEach(function (s, k) {
        var d = '',
          pen = 'M';
        s.values.forEach(function (v, i) {
          if (v === null) {
            pen = 'M';
            return;
          }
          d += pen + X(axis.x[i]).toFixed(1) + ',' + Y(v).toFixed(1);
          pen = 'L';
        });
        if (d) {
          var path = svg('path', { class: 'line series-' + (k % 4), d: d });
          path.appendChild(svg('title', {}, s.name));
          out.appendChild(path);
        }
        s.values.forEach(function (v, i) {
          if (v === null || s.values[i - 1] != null || s.values[i + 1] != null) return;
          var dot = svg('circle', {
            class: 'dot series-' + (k % 4),
            cx: X(axis.x[i]).toFixed(1),
            cy: Y(v).toFixed(1),
            r: 3,
          });
          dot.appendChild(svg('title', {}, s.name + ': ' + fmt(v)));
          out.appendChild(dot);
        });
      });
      spec.levels.forEach(function (l) {
        var g = svg('g', { class: 'level' }),
          ly = Y(l.y);
        g.appendChild(
          svg('line', { x1: left, x2: W - M.right, y1: ly.toFixed(1), y2: ly.toFixed(1) }),
        );
        g.appendChild(
          svg(
            'text',
            {
              x: W - M.right - 4,
              y: ly.toFixed(1),
              dy: ly - M.top < 20 ? '1.2em' : '-.4em',
              'text-anchor': 'end',
            },
            l.label,
          ),
        );
        out.appendChild(g);
      });
    }
    old.replaceWith(out);
    setText(figure.querySelector('figcaption'), summary);
  }
  function drawCharts() {
    var boxes = document.querySelectorAll('[data-chart]');
    for (var i = 0; i < boxes.length; i++)
      drawChart(boxes[i], JSON.parse(boxes[i].getAttribute('data-chart')));
  }

  var statusKey = null;
  function status(list) {
    var box = document.getElementById('ops-status');
    var key = JSON.stringify(
      list.map(function (b) {
        return b.text;
      }),
    );
    if (!box || key === statusKey) return; // unchanged: nothing new for a screen reader to announce
    statusKey = key;
    box.className = list.length ? 'error' : 'success';
    var parts = document.createDocumentFragment();
    if (!list.length) parts.appendChild(el('p', 'All figures within their thresholds.'));
    else {
      var head = el('p');
      head.appendChild(el('strong', 'Past their thresholds:'));
      var ul = el('ul');
      list.forEach(function (b) {
        ul.appendChild(el('li', b.text));
      });
      parts.appendChild(head);
      parts.appendChild(ul);
    }
    box.replaceChildren(parts);
  }
  function codeCell(text) {
    var th = el('th');
    th.setAttribute('scope', 'row');
    th.appendChild(el('code', text));
    return th;
  }
  function emptyRow(text, cols) {
    var tr = el('tr'),
      td = el('td', text);
    td.setAttribute('colspan', String(cols));
    tr.appendChild(td);
    return tr;
  }
  function recent5xx(list) {
    var body = document.querySelector('#ops-recent-5xx tbody');
    if (!body) return;
    var rows = document.createDocumentFragment();
    list.forEach(function (e) {
      var tr = el('tr');
      tr.appendChild(el('td', FMT.at(e.at)));
      tr.appendChild(codeCell(e.method + ' ' + e.route));
      tr.appendChild(el('td', String(e.status), 'num'));
      rows.appendChild(tr);
    });
    if (!list.length) rows.appendChild(emptyRow('No 5xx since the process started.', 3));
    body.replaceChildren(rows);
  }
  function routes(list) {
    var body = document.querySelector('#ops-routes tbody');
    var quiet = document.getElementById('ops-quiet');
    if (!body || !quiet) return;
    var rows = document.createDocumentFragment(),
      names = document.createDocumentFragment(),
      busy = 0,
      idle = 0;
    list.forEach(function (r) {
      if (r.requests === 0) {
        idle++;
        var li = el('li');
        li.appendChild(el('code', r.method + ' ' + r.route));
        names.appendChild(li);
        return;
      }
      busy++;
      var tr = el('tr');
      tr.appendChild(codeCell(r.method + ' ' + r.route));
      [
        FMT.int(r.requests),
        FMT.rate(r.rate),
        FMT.ms(r.p50_ms),
        FMT.ms(r.p99_ms),
        FMT.int(r.errors_4xx),
        FMT.int(r.errors_5xx),
      ].forEach(function (t) {
        tr.appendChild(el('td', t, 'num'));
      });
      rows.appendChild(tr);
    });
    if (!busy) rows.appendChild(emptyRow('No request in this window.', 7));
    body.replaceChildren(rows);
    document.getElementById('ops-quiet-routes').replaceChildren(names);
    setText(document.getElementById('ops-quiet-count'), String(idle));
    quiet.hidden = idle === 0;
  }
  function show(f) {
    var els = document.querySelectorAll('[data-f]');
    for (var i = 0; i < els.length; i++) {
      var v = pick(f, els[i].getAttribute('data-f'));
      var fmt = FMT[els[i].getAttribute('data-fmt')] || FMT.int;
      if (v !== undefined) setText(els[i], fmt(v));
    }
    status(f.status || []);
    recent5xx(f.recent_5xx || []);
    routes(f.routes || []);
    var basis =
      f.window_s > 0
        ? 'over the last ' + f.window_s.toFixed(0) + ' s'
        : 'since the process started';
    var spans = document.querySelectorAll('#ops-basis, .ops-basis');
    for (var j = 0; j < spans.length; j++) setText(spans[j], basis);
    setText(
      live,
      'Live: updated every second from pid ' + f.process.pid + ' on ' + f.process.host + '.',
    );
  }
  var feed = new EventSource('/ops/feed');
  feed.addEventListener('history', function (e) {
    history = JSON.parse(e.data);
    drawCharts();
  });
  feed.addEventListener('point', function (e) {
    if (!history) return;
    history.points.push(JSON.parse(e.data));
    while (history.points.length > history.max_points) history.points.shift();
    drawCharts();
  });
  feed.addEventListener('figures', function (e) {
    show(JSON.parse(e.data));
  });
  feed.onerror = function () {
    setText(live, 'Live updates paused: reconnecting to the feed.');
  };
})();
