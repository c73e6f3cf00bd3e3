// The reorder page's script. Without it each move button sends the form,
// which comes back with the page moved. With it, pages move at once: by
// dragging (SortableJS), by their buttons, or by Alt+Up / Alt+Down on a
// focused page; each move is announced. "Save order" then sends the list's
// order in one request. A page's label field moves with it, so that
// "Save labels" (the same form, sent to /works/{id}/labels) pairs each
// page's id with its label whatever the order.
"use strict";
(function () {
  var list = document.getElementById("reorder-list");
  var status = document.getElementById("reorder-status");
  if (!list || !status) { return; }
  var d = list.dataset;
  var offset = parseInt(d.offset, 10) || 1;

  function fill(msg, vals) {
    return msg.replace(/\{(\w+)\}/g, function (m, k) { return k in vals ? String(vals[k]) : m; });
  }

  // renumber shows each page's new place; it returns the place of li.
  function renumber(li) {
    var at = 0;
    Array.prototype.forEach.call(list.children, function (item, i) {
      var pos = item.querySelector(".pos");
      if (pos) { pos.textContent = fill(d.msgPage, { n: offset + i }); }
      var lab = item.querySelector(".lab-pos");
      if (lab) { lab.textContent = fill(d.msgLabel, { n: offset + i }); }
      if (item === li) { at = offset + i; }
    });
    return at;
  }

  function announce(li) {
    var at = renumber(li);
    var id = li.querySelector(".name");
    status.textContent = fill(d.msgMoved, { page: id ? id.textContent : "", pos: at });
  }

  function move(li, step, focus) {
    var other = step < 0 ? li.previousElementSibling : li.nextElementSibling;
    if (!other) {
      status.textContent = step < 0 ? d.msgTop : d.msgBottom;
      return;
    }
    if (step < 0) { list.insertBefore(li, other); } else { list.insertBefore(other, li); }
    announce(li);
    if (focus) { focus.focus(); }
  }

  list.addEventListener("click", function (e) {
    var btn = e.target.closest("button[data-move]");
    if (!btn) { return; }
    e.preventDefault();
    move(btn.closest("li"), parseInt(btn.dataset.move, 10), btn);
  });

  list.addEventListener("keydown", function (e) {
    if (!e.altKey || (e.key !== "ArrowUp" && e.key !== "ArrowDown")) { return; }
    var li = e.target.closest("li");
    if (!li || li.parentElement !== list) { return; }
    e.preventDefault();
    move(li, e.key === "ArrowUp" ? -1 : 1, e.target);
  });

  if (window.Sortable) {
    window.Sortable.create(list, {
      animation: 150,
      ghostClass: "sortable-ghost",
      filter: "button, input, summary, label",
      preventOnFilter: false,
      onEnd: function (evt) { if (evt.oldIndex !== evt.newIndex) { announce(evt.item); } }
    });
  }
})();
