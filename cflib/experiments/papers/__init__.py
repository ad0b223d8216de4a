"""The five papers' figures and tables: the values the papers print (:mod:`.values`), for the book's tables to show beside its own."""
