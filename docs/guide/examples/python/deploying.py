# One store URL for every process: a SQLite file on one machine, one
# PostgreSQL database for many servers (PARLANCE_STORE_URL, as `parlance
# serve` reads it). Opening the store creates and migrates its schema.
import os

from parlance import Store

url = os.environ.get("PARLANCE_STORE_URL", "sqlite://parlance.db")
store = Store(url)
thread = store.create_thread_sync({"customer": "ada"})
print(url.split(":")[0], store.thread_sync(thread)["metadata"], len(store.messages_sync(thread)))
store.delete_thread_sync(thread)
