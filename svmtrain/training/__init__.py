"""Training orchestration: the one-vs-rest loop (:mod:`.train`), out-of-core runs (:mod:`.streamed`), class threads, online updates and traces."""
