"""The names the data goes by: an event and its prompt (`events`), the SQUID-E release's files and its names for
events and videos (`release`), and licence ids (`licenses`)."""
