// The pay forms' card fields as people expect them (the form works without this script: the
// service ignores spaces and reads MM/YY): the number in groups of four as it is typed, its brand
// named beside it (the same prefixes as src/payments/cards.ts cardBrand), and the expiry's slash.
(function () {
  var NAMES = {
    visa: 'Visa',
    mastercard: 'Mastercard',
    amex: 'American Express',
    discover: 'Discover',
  };
  function brandOf(d) {
    var two = Number(d.slice(0, 2));
    var four = Number(d.slice(0, 4));
    if (d.charAt(0) === '4') return 'visa';
    if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'mastercard';
    if (two === 34 || two === 37) return 'amex';
    if (d.slice(0, 4) === '6011' || two === 65) return 'discover';
    return '';
  }
  function groups(d, brand) {
    if (brand === 'amex')
      return [d.slice(0, 4), d.slice(4, 10), d.slice(10, 15)].filter(Boolean).join(' ');
    return d.replace(/(\d{4})(?=\d)/g, '$1 ');
  }
  var numbers = document.querySelectorAll('input[data-card-number]');
  for (var i = 0; i < numbers.length; i++) {
    (function (input) {
      var label = input.closest('label');
      var out = label && label.querySelector('.brand');
      function update() {
        var d = input.value.replace(/\D/g, '').slice(0, 19);
        var brand = brandOf(d);
        var formatted = groups(d, brand);
        if (formatted !== input.value) {
          var atEnd = input.selectionStart === input.value.length;
          input.value = formatted;
          if (atEnd) input.setSelectionRange(formatted.length, formatted.length);
        }
        if (out) out.textContent = d.length === 0 ? '' : brand ? NAMES[brand] : 'Card';
      }
      input.addEventListener('input', update);
      update();
    })(numbers[i]);
  }
  var exps = document.querySelectorAll('input[data-card-exp]');
  for (var j = 0; j < exps.length; j++) {
    exps[j].addEventListener('input', function (e) {
      var el = e.target;
      var d = el.value.replace(/\D/g, '').slice(0, 4);
      if (e.inputType && e.inputType.indexOf('delete') === 0) return;
      el.value = d.length > 2 ? d.slice(0, 2) + '/' + d.slice(2) : d.length === 2 ? d + '/' : d;
    });
  }
})();
