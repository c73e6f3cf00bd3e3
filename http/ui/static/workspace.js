// The workspace's script. Without it the pages work as they are: every
// work is ticked one by one, every part of the change form is shown (each
// with its hint), and a running change's page has a link that shows the
// progress anew. With it, one box ticks every work of the page, the form
// shows only what the chosen change needs, and a running change's page
// follows its progress by itself.
"use strict";
(function () {
  var all = document.getElementById("ws-all-page");
  var picks = document.querySelectorAll("input.ws-pick");
  if (all && picks.length) {
    all.hidden = false;
    var sync = function () {
      var n = 0;
      picks.forEach(function (p) { if (p.checked) { n++; } });
      all.checked = n === picks.length;
      all.indeterminate = n > 0 && n < picks.length;
    };
    all.addEventListener("change", function () {
      picks.forEach(function (p) { p.checked = all.checked; });
    });
    picks.forEach(function (p) { p.addEventListener("change", sync); });
    sync();
  }

  var what = document.getElementById("ws-what");
  if (what) {
    var args = document.querySelectorAll(".ws-arg");
    var show = function () {
      args.forEach(function (a) {
        a.hidden = a.dataset.for.split(" ").indexOf(what.value) < 0;
      });
    };
    what.addEventListener("change", show);
    show();
  }

  var run = document.getElementById("ws-run");
  if (run && run.dataset.live) {
    var poll = function () {
      fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var next = doc.getElementById("ws-run"), status = doc.getElementById("ws-run-status");
          if (!next || !status) { return; }
          document.getElementById("ws-run-status").innerHTML = status.innerHTML;
          if (next.dataset.live) { window.setTimeout(poll, 1000); }
        })
        .catch(function () { window.setTimeout(poll, 5000); });
    };
    window.setTimeout(poll, 1000);
  }
})();
