// The bulk ingest's run page: while the manifest is checked or the ingest
// runs, its progress is asked for every second (GET /bulk/{run}/progress)
// and shown in place; when the run changes state (the check is done, the
// ingest ends) the page is read again. Without script the page has a link
// that reloads it.
"use strict";
(function () {
  var root = document.getElementById("bulk-run");
  if (!root || root.dataset.live !== "true") {
    return;
  }
  var url = root.dataset.progress;
  var initial = root.dataset.state;
  var bar = document.getElementById("bulk-bar");
  var state = document.getElementById("bulk-state");
  var summary = document.getElementById("bulk-summary");
  var rate = document.getElementById("bulk-rate");
  var files = document.getElementById("bulk-files");
  var error = document.getElementById("bulk-error");
  var heading = document.getElementById("bulk-failures-heading");
  var list = document.getElementById("bulk-failures");
  var refresh = document.getElementById("bulk-refresh");
  var cancel = document.getElementById("bulk-cancel");
  if (refresh) {
    refresh.hidden = true;
  }
  var shown = list.children.length;

  function set(el, text) {
    if (el && el.textContent !== text) {
      el.textContent = text;
    }
  }

  function show(d) {
    if (bar && d.state === "running") {
      bar.value = d.percent;
      set(bar, d.percent + " %");
    }
    set(state, d.stateText);
    set(summary, d.summary);
    set(rate, d.rate);
    set(files, String(d.files));
    if (d.error) {
      set(error, d.error);
      error.hidden = false;
    }
    if (d.failures.length > shown) {
      for (var i = shown; i < d.failures.length; i++) {
        var li = document.createElement("li");
        var code = document.createElement("code");
        code.textContent = d.failures[i].label || d.failures[i].key;
        li.appendChild(code);
        li.appendChild(document.createTextNode(": " + d.failures[i].reason));
        list.appendChild(li);
      }
      shown = d.failures.length;
      heading.hidden = false;
    }
  }

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (res) {
        if (!res.ok) {
          throw new Error("HTTP " + res.status);
        }
        return res.json();
      })
      .then(function (d) {
        show(d);
        if (d.state !== initial) {
          // checked, or ended: the page of the new state
          if (cancel) {
            cancel.hidden = true;
          }
          window.setTimeout(function () { window.location.reload(); }, 500);
          return;
        }
        window.setTimeout(poll, 1000);
      })
      .catch(function () {
        if (refresh) {
          refresh.hidden = false;
        }
        window.setTimeout(poll, 5000);
      });
  }
  window.setTimeout(poll, 500);
})();
