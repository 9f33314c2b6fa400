// What every page of the site gets on top of its HTML (each page is complete without it):
// - a table sits in a focusable box that scrolls sideways when it is wider than the page, named
//   after its caption or the heading before it, so keyboards and screen readers can scroll it;
// - a chart that is still wider than its figure (charts scale to their box) scrolls in it, which
//   then takes the keyboard's focus;
// - <time class="local" datetime="..."> is shown in the reader's own time zone, the UTC time the
//   server wrote staying in its title.
(function () {
  function nameOf(table) {
    var cap = table.querySelector('caption');
    if (cap && cap.textContent.trim()) return cap.textContent.trim();
    var el = table.parentElement;
    for (var node = table; node && node !== document.body; node = node.parentElement) {
      var prev = node.previousElementSibling;
      while (prev) {
        if (/^H[1-4]$/.test(prev.tagName)) return prev.textContent.trim();
        prev = prev.previousElementSibling;
      }
    }
    return el ? 'Table' : 'Table';
  }
  var tables = document.querySelectorAll('main table');
  for (var i = 0; i < tables.length; i++) {
    var t = tables[i];
    if (
      t.closest('.api-docs') ||
      (t.parentElement && t.parentElement.classList.contains('table-wrap'))
    )
      continue;
    var wrap = document.createElement('div');
    wrap.className = 'table-wrap';
    t.parentNode.insertBefore(wrap, t);
    wrap.appendChild(t);
  }
  function focusable() {
    var boxes = document.querySelectorAll('main .table-wrap, main figure.chart');
    for (var j = 0; j < boxes.length; j++) {
      var b = boxes[j];
      if (b.scrollWidth > b.clientWidth + 1) {
        if (!b.hasAttribute('tabindex')) {
          b.setAttribute('tabindex', '0');
          b.setAttribute('data-scrolls', '');
          if (b.classList.contains('table-wrap') && !b.hasAttribute('role')) {
            b.setAttribute('role', 'region');
            b.setAttribute('aria-label', nameOf(b.querySelector('table')) + ' (scrolls sideways)');
          }
        }
      } else if (b.hasAttribute('data-scrolls')) {
        b.removeAttribute('tabindex');
        b.removeAttribute('data-scrolls');
        if (
          b.getAttribute('aria-label') &&
          /\(scrolls sideways\)$/.test(b.getAttribute('aria-label'))
        ) {
          b.removeAttribute('role');
          b.removeAttribute('aria-label');
        }
      }
    }
  }
  focusable();
  window.addEventListener('resize', focusable);

  var pad = function (n) {
    return (n < 10 ? '0' : '') + n;
  };
  var times = document.querySelectorAll('time.local[datetime]');
  for (var k = 0; k < times.length; k++) {
    var el = times[k];
    var d = new Date(el.getAttribute('datetime'));
    if (isNaN(d.getTime())) continue;
    var withDate = el.hasAttribute('data-date');
    var text =
      (withDate
        ? d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' '
        : '') +
      pad(d.getHours()) +
      ':' +
      pad(d.getMinutes()) +
      (el.hasAttribute('data-seconds') ? ':' + pad(d.getSeconds()) : '');
    if (!el.title) el.title = el.textContent;
    el.textContent = text + ' your time';
  }
})();
