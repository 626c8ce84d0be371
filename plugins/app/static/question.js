// The question pages. An ad-hoc question's link (/question#<base64>) keeps the question in the hash,
// which never reaches the server: this asks /question/adhoc for the page of the question it holds, or
// opens the SQL editor for a native one.
// And a chart is drawn on the server in the page's theme, so a theme switch asks for it again.
(function () {
  function show(url) {
    htmx.ajax("GET", url, { target: "#question", select: "#question", swap: "outerHTML" });
  }

  // A native question opens in the SQL editor (/question/native), with the link's values by slug.
  function isNative(text) {
    try {
      var question = JSON.parse(atob(text.replace(/-/g, "+").replace(/_/g, "/")));
      var query = question && (question.dataset_query || (question.database !== undefined ? question : null));
      var stages = query && Array.isArray(query.stages) ? query.stages : [];
      return !!query && (query.type === "native" || stages.some(function (stage) {
        return stage && stage["lib/type"] === "mbql.stage/native";
      }));
    } catch (e) {
      return false;  // the server says what is wrong with it
    }
  }

  function fromHash() {
    if (location.pathname !== "/question" || !document.getElementById("question")) return;
    var text = location.hash.slice(1);
    try { text = decodeURIComponent(text); } catch (e) { /* left as it is: the server says what is wrong */ }
    if (isNative(text)) {
      location.replace("/question/native?q=" + encodeURIComponent(text) + location.search.replace(/^\?/, "&"));
      return;
    }
    show("/question/adhoc?q=" + encodeURIComponent(text));
  }

  fromHash();
  window.addEventListener("hashchange", fromHash);

  // app.js's handler (registered first) has already switched the theme and its cookie.
  document.addEventListener("click", function (event) {
    if (!event.target.closest("[data-theme-toggle]")) return;
    var question = document.getElementById("question");
    if (question && question.dataset.src && question.querySelector(".chart")) show(question.dataset.src);
  });
})();
