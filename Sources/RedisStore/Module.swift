// Module RedisStore.
