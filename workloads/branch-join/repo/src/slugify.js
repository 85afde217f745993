'use strict';

/** "Hello, World 2" -> "hello-world-2": lowercase, letters and digits, words joined by "-". */
function slugify(text) {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .join('-');
}

module.exports = { slugify };
