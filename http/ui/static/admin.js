// The administrators' dashboard, kept live: a stream of server-sent
// events (GET /admin/events) updates the counts, rates, paused states,
// ingest runs and the sparkline in place. The server ends each stream
// after a few minutes and the browser opens a new one. Without script the
// page is a snapshot with a link to read it again.
"use strict";
(function () {
  var root = document.querySelector("[data-events]");
  if (!root || !window.EventSource) {
    return;
  }
  var live = root.querySelector(".admin-live-on");
  var refresh = root.querySelector(".admin-refresh");

  function each(sel, fn) {
    Array.prototype.forEach.call(root.querySelectorAll(sel), fn);
  }

  function cell(text) {
    var td = document.createElement("td");
    td.textContent = text;
    return td;
  }

  function runs(list) {
    var body = root.querySelector("tbody[data-runs]");
    if (!body) {
      return;
    }
    while (body.firstChild) {
      body.removeChild(body.firstChild);
    }
    list.forEach(function (r) {
      var tr = document.createElement("tr");
      var id = document.createElement("td");
      var code = document.createElement("code");
      code.textContent = r.id;
      id.appendChild(code);
      tr.appendChild(id);
      tr.appendChild(cell(r.user));
      tr.appendChild(cell(r.started));
      tr.appendChild(cell(r.state));
      var td = document.createElement("td");
      var bar = document.createElement("progress");
      bar.max = r.total > 0 ? r.total : 1;
      bar.value = r.processed;
      bar.textContent = r.processed + " / " + r.total;
      bar.setAttribute("aria-label", body.getAttribute("data-label") || "");
      var span = document.createElement("span");
      span.textContent = " " + r.count;
      td.appendChild(bar);
      td.appendChild(span);
      tr.appendChild(td);
      body.appendChild(tr);
    });
  }

  function update(ev) {
    var d;
    try {
      d = JSON.parse(ev.data);
    } catch (e) {
      return;
    }
    each("[data-k]", function (el) {
      var v = d.text[el.getAttribute("data-k")];
      if (v !== undefined) {
        el.textContent = v === "" ? "\u2013" : v;
      }
    });
    each("[data-show]", function (el) {
      var f = d.flags[el.getAttribute("data-show")];
      if (f !== undefined) {
        el.hidden = !f;
      }
    });
    each("[data-hide]", function (el) {
      var f = d.flags[el.getAttribute("data-hide")];
      if (f !== undefined) {
        el.hidden = f;
      }
    });
    var line = root.querySelector(".spark-line:not(.req-admitted):not(.req-refused)");
    if (line) {
      line.setAttribute("points", d.spark || "");
    }
    var admitted = root.querySelector(".req-admitted");
    if (admitted) {
      admitted.setAttribute("points", d.reqAdmitted || "");
    }
    var refused = root.querySelector(".req-refused");
    if (refused) {
      refused.setAttribute("points", d.reqRefused || "");
    }
    runs(d.runs || []);
  }

  var source = new EventSource(root.getAttribute("data-events"));
  source.addEventListener("status", function (ev) {
    if (live) {
      live.hidden = false;
    }
    if (refresh) {
      refresh.hidden = true;
    }
    update(ev);
  });
  source.addEventListener("error", function () {
    // the browser reconnects on its own unless the server refused the
    // stream (signed out, no longer an administrator)
    if (source.readyState === EventSource.CLOSED) {
      if (live) {
        live.hidden = true;
      }
      if (refresh) {
        refresh.hidden = false;
      }
    }
  });
})();
