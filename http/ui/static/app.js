// Shelfmark's shared script. Every page works without it; it only adds
// conveniences. Scripts of single pages live in files of their own.
"use strict";
(function () {
  // The form token for requests made by scripts (sent as X-CSRF-Token).
  var meta = document.querySelector('meta[name="csrf-token"]');
  window.shelfmark = { csrf: meta ? meta.content : "" };

  // The facets fold behind their heading on a narrow screen (a phone):
  // closed there when the page loads; open elsewhere, and without script.
  if (window.matchMedia && window.matchMedia("(max-width: 48rem)").matches) {
    document.querySelectorAll("details.fold[open]").forEach(function (d) {
      d.open = false;
    });
  }

  // Forms with data-confirm ask before they are sent (deleting, for
  // example); without script the server's confirmation page asks.
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (f.dataset && f.dataset.confirm && !window.confirm(f.dataset.confirm)) {
      e.preventDefault();
    }
  });
})();
