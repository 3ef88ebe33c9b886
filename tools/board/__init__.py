"""Working with a real board: `deploy` (make deploy), `flash` (make flash), `repl`
(make repl). Thin, checked wrappers around mpremote and esptool."""
