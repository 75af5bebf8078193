"""The network processor: the kernel part that runs NP programs (processor), their API (program), and the
programs of the source papers, one module each."""
