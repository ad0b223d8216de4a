"""The five papers' figures and tables: the values the papers print (:mod:`.values`), for the book's tables to show beside its own, and the index of every figure and table with the book's
counterpart (:mod:`.index`), from which the page "Figures and tables of the papers" is generated."""
