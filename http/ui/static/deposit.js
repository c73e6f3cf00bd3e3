// The deposit and edit forms' script. Without it the forms work as they
// are: "Add another field" sends the form and it comes back with one more
// row, and the files go with the form. With it, a row is added at once,
// and each file is uploaded as soon as it is chosen or dropped (to POST
// /api/v1/blobs, with its own progress bar); the form then names the
// stored bytes instead of carrying them. The pickers of the picked
// fields are picker.js's.
"use strict";
(function () {
  function fill(msg, vals) {
    return msg.replace(/\{(\w+)\}/g, function (m, k) { return k in vals ? String(vals[k]) : m; });
  }

  // Repeatable metadata rows.
  var rows = document.getElementById("meta-rows");
  var addBtn = document.querySelector("[data-add-row]");

  if (rows && addBtn) {
    addBtn.addEventListener("click", function (e) {
      e.preventDefault();
      var last = rows.lastElementChild;
      if (!last) { return; }
      var row = last.cloneNode(true);
      var n = rows.children.length;
      var sel = row.querySelector("select"), val = row.querySelector('input[name="value"]');
      var kind = row.querySelector('input[name="kind"]'), labels = row.querySelectorAll("label");
      var name = row.querySelector(".value-name");
      sel.id = "field-" + n; val.id = "value-" + n;
      labels[0].htmlFor = sel.id; labels[1].htmlFor = val.id;
      labels[0].textContent = fill(rows.dataset.labelField, { n: n + 1 });
      labels[1].textContent = fill(rows.dataset.labelValue, { n: n + 1 });
      val.value = ""; val.defaultValue = ""; val.required = false; kind.value = "";
      val.removeAttribute("aria-invalid");
      if (name) {
        name.id = "value-name-" + n; name.textContent = ""; name.dataset.stored = "";
        val.setAttribute("aria-describedby", "meta-hint " + name.id);
      }
      // a field the form does not offer stays with its own row
      var own = sel.querySelector("option[data-own]");
      if (own) { own.remove(); }
      sel.value = last.querySelector("select").value;
      if (!sel.value) { sel.selectedIndex = 0; }
      rows.appendChild(row);
      // the pickers (picker.js) set the new row up for its field
      sel.dispatchEvent(new Event("change", { bubbles: true }));
      val.focus();
    });
  }

  // The drop zone.
  var form = document.getElementById("deposit-form");
  var zone = document.getElementById("dropzone");
  var input = document.getElementById("deposit-files");
  var list = document.getElementById("uploads");
  var status = document.getElementById("upload-status");
  if (!form || !zone || !input || !list || !window.XMLHttpRequest) { return; }
  var d = zone.dataset;
  var max = parseInt(d.max, 10) || 0;
  var pending = 0;
  // the files now travel on their own: the form sends only their names
  input.removeAttribute("name");
  form.enctype = "application/x-www-form-urlencoded";
  var hint = document.createElement("p");
  hint.textContent = d.msgDrop;
  zone.insertBefore(hint, zone.firstChild);

  function say(msg) { status.textContent = msg; }

  function hidden(li, name, value) {
    var h = document.createElement("input");
    h.type = "hidden"; h.name = name; h.value = value;
    li.appendChild(h);
  }

  function upload(file) {
    var li = document.createElement("li");
    var name = document.createElement("span");
    name.className = "name";
    name.textContent = file.name;
    var bar = document.createElement("progress");
    bar.max = 100; bar.value = 0;
    bar.setAttribute("aria-label", fill(d.msgProgress, { name: file.name, pct: 0 }));
    var note = document.createElement("span");
    note.className = "note";
    var rm = document.createElement("button");
    rm.type = "button"; rm.className = "link";
    rm.textContent = fill(d.msgRemove, { name: file.name });
    li.appendChild(name); li.appendChild(bar); li.appendChild(note); li.appendChild(rm);
    list.appendChild(li);
    if (max && file.size > max) {
      bar.remove();
      note.className = "note bad";
      note.textContent = fill(d.msgToolarge, { name: file.name });
      say(note.textContent);
      rm.addEventListener("click", function () { li.remove(); });
      return;
    }
    var xhr = new XMLHttpRequest();
    pending++;
    rm.addEventListener("click", function () {
      if (xhr.readyState !== 4) { xhr.abort(); }
      li.remove();
    });
    xhr.open("POST", "/api/v1/blobs");
    xhr.setRequestHeader("Content-Type", file.type || "application/octet-stream");
    xhr.setRequestHeader("X-CSRF-Token", window.shelfmark ? window.shelfmark.csrf : "");
    xhr.upload.addEventListener("progress", function (e) {
      if (e.lengthComputable) {
        var pct = Math.floor(100 * e.loaded / e.total);
        bar.value = pct;
        bar.setAttribute("aria-label", fill(d.msgProgress, { name: file.name, pct: pct }));
      }
    });
    xhr.addEventListener("loadend", function () {
      pending--;
      var ok = xhr.status === 201, body = null;
      try { body = JSON.parse(xhr.responseText); } catch (err) { ok = false; }
      if (ok && body && body.sha256) {
        bar.value = 100;
        note.className = "note ok";
        note.textContent = fill(d.msgDone, { name: file.name });
        hidden(li, "file_sha256", body.sha256);
        hidden(li, "file_name", file.name);
        hidden(li, "file_size", String(body.size));
        hidden(li, "file_type", file.type || "application/octet-stream");
      } else if (xhr.status !== 0 || li.isConnected) {
        var why = (body && body.error && body.error.message) || (body && body.message) || String(xhr.status || "");
        note.className = "note bad";
        note.textContent = fill(d.msgFailed, { name: file.name, why: why });
      }
      if (li.isConnected) { say(note.textContent); }
    });
    xhr.send(file);
  }

  function take(files) {
    for (var i = 0; i < files.length; i++) { upload(files[i]); }
  }
  input.addEventListener("change", function () { take(input.files); input.value = ""; });
  zone.addEventListener("dragover", function (e) { e.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", function () { zone.classList.remove("over"); });
  zone.addEventListener("drop", function (e) {
    e.preventDefault();
    zone.classList.remove("over");
    if (e.dataTransfer && e.dataTransfer.files) { take(e.dataTransfer.files); }
  });
  form.addEventListener("submit", function (e) {
    if (pending > 0) {
      e.preventDefault();
      say(d.msgWait);
    }
  });
})();
