"""The LSP front end: the pygls server's handlers (`handlers`) over readkeeper's own
stdio transport (`transport`)."""
