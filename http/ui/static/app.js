// Shelfmark's shared script. Every page works without it; it only adds
// conveniences. Scripts of single pages live in files of their own.
"use strict";
(function () {
  // The form token for requests made by scripts (sent as X-CSRF-Token).
  var meta = document.querySelector('meta[name="csrf-token"]');
  window.shelfmark = { csrf: meta ? meta.content : "" };

  // Forms with data-confirm ask before they are sent (deleting, for
  // example); without script the server's confirmation page asks.
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (f.dataset && f.dataset.confirm && !window.confirm(f.dataset.confirm)) {
      e.preventDefault();
    }
  });
})();
