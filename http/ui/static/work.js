// The work page: the next pages of a long work are fetched when the
// "More pages" link scrolls into view, and added to the grid and the
// files table. Without script (or without IntersectionObserver) the link
// opens the next page as usual; the link stays until the last page.
// The Share button (hidden without script, where the permanent link on
// the page serves) opens the system's share sheet, else copies the
// work's address and says so.
"use strict";
(function () {
  var share = document.getElementById("work-share");
  if (!share || !(navigator.share || (navigator.clipboard && window.isSecureContext))) {
    return;
  }
  var said = document.getElementById("share-status");
  share.hidden = false;
  share.addEventListener("click", function () {
    var url = share.dataset.url;
    if (navigator.share) {
      navigator.share({ title: share.dataset.title, url: url }).catch(function () {});
      return;
    }
    navigator.clipboard.writeText(url).then(function () {
      if (said) {
        said.textContent = share.dataset.copied || "";
      }
    });
  });
})();

(function () {
  var nav = document.querySelector("[data-more-pages]");
  var grid = document.getElementById("work-pages");
  if (!nav || !grid || !("IntersectionObserver" in window) || !window.fetch || !window.DOMParser) {
    return;
  }
  var files = document.getElementById("work-files");
  var status = document.getElementById("pages-status");
  var busy = false;

  function next() {
    return nav.querySelector('a[rel="next"]');
  }

  function load() {
    var link = next();
    if (busy || !link) {
      return;
    }
    busy = true;
    if (status) {
      status.textContent = nav.dataset.loading || "";
    }
    fetch(link.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (res) {
        if (!res.ok) {
          throw new Error("HTTP " + res.status);
        }
        return res.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        doc.querySelectorAll("#work-pages > li").forEach(function (li) {
          grid.appendChild(document.importNode(li, true));
        });
        if (files) {
          doc.querySelectorAll("#work-files > tr").forEach(function (tr) {
            files.appendChild(document.importNode(tr, true));
          });
        }
        var more = doc.querySelector('[data-more-pages] a[rel="next"]');
        if (more) {
          link.href = more.getAttribute("href");
        } else {
          link.remove();
          observer.disconnect();
        }
        if (status) {
          status.textContent = nav.dataset.loaded || "";
        }
        busy = false;
        // still in view (a short page, a tall window): go on
        if (more && nav.getBoundingClientRect().top < window.innerHeight + 400) {
          load();
        }
      })
      .catch(function () {
        // the link still works: leave it to the reader
        observer.disconnect();
        busy = false;
        if (status) {
          status.textContent = "";
        }
      });
  }

  var observer = new IntersectionObserver(function (entries) {
    entries.forEach(function (e) {
      if (e.isIntersecting) {
        load();
      }
    });
  }, { rootMargin: "400px" });
  if (next()) {
    observer.observe(nav);
  }
})();
