// Keeps the cart pages' "closes in N min (HH:MM UTC)" current. The server writes the same words
// (src/http/cart-view.ts countdown), so the page is right without this script too.
(function () {
  var hhmm = function (unix) { return new Date(unix * 1000).toISOString().slice(11, 16); };
  function words(closesAt) {
    var left = closesAt - Date.now() / 1000;
    var at = '(' + hhmm(closesAt) + ' UTC)';
    if (left <= 0) return 'closed ' + at;
    return left >= 60 ? 'closes in ' + Math.ceil(left / 60) + ' min ' + at : 'closes in ' + Math.ceil(left) + ' s ' + at;
  }
  function tick() {
    var els = document.querySelectorAll('.countdown[data-closes]');
    for (var i = 0; i < els.length; i++) els[i].textContent = words(Number(els[i].getAttribute('data-closes')));
  }
  tick();
  setInterval(tick, 1000);
})();
