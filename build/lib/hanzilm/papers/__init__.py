"""One package per paper, named like the book's chapters. A paper package may import the shared modules above
it (data, profiles, train, store, results, ...); it never imports another paper package."""
