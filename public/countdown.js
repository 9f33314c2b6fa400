// Keeps the purchase and cart pages' "closes in N s (HH:MM:SS UTC)" current, second by second. The
// server writes the same words (src/web/cart-view.ts countdown), so the page is right without this
// script too: the close time is in the text.
(function () {
  var hhmmss = function (unix) {
    return new Date(unix * 1000).toISOString().slice(11, 19);
  };
  function words(closesAt) {
    var left = Math.ceil(closesAt - Date.now() / 1000);
    var at = '(' + hhmmss(closesAt) + ' UTC)';
    return left > 0 ? 'closes in ' + left + ' s ' + at : 'closed ' + at;
  }
  function tick() {
    var els = document.querySelectorAll('.countdown[data-closes]');
    for (var i = 0; i < els.length; i++)
      els[i].textContent = words(Number(els[i].getAttribute('data-closes')));
  }
  tick();
  setInterval(tick, 1000);
})();
