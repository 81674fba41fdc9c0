package io.github.ratelimit.gateway.redis;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveRedisTemplate;
import org.springframework.data.redis.serializer.RedisSerializationContext;

/**
 * {@link RedisScriptExecutor} through Spring Data Redis' reactive template, over any
 * {@link ReactiveRedisConnectionFactory} (the auto-configuration's choice when the factory is not Lettuce's). Scripts
 * run with EVALSHA and EVAL on NOSCRIPT (Spring Data's script executor); keys and arguments go out as the caller's
 * bytes. Each call is one reactive pipeline, turned into a future once, here.
 *
 * <p>Calls made until a first one succeeds run on Reactor's bounded elastic scheduler (opening the shared connection
 * blocks); later ones are sent from the caller's thread. The connection belongs to the factory: {@link #close()}
 * leaves it open.
 */
public final class SpringDataScriptExecutor implements RedisScriptExecutor {

	private final ReactiveRedisTemplate<byte[], byte[]> redis;

	private volatile boolean connected;

	/**
	 * Create an executor.
	 * @param connectionFactory the reactive connection factory, e.g. Boot's
	 */
	public SpringDataScriptExecutor(ReactiveRedisConnectionFactory connectionFactory) {
		this.redis = new ReactiveRedisTemplate<>(connectionFactory, RedisSerializationContext.byteArray());
	}

	@Override
	public CompletableFuture<List<Object>> eval(LuaScript script, byte[][] keys, byte[][] args) {
		return send(this.redis.execute(script.asRedisScript(), Arrays.asList(keys), Arrays.asList(args))
			.next()
			.switchIfEmpty(Mono.error(() -> new IllegalStateException("Empty reply from script " + script.sha1()))));
	}

	@Override
	public CompletableFuture<Long> delete(byte[][] keys) {
		return send(this.redis.delete(keys));
	}

	@Override
	public CompletableFuture<Long> removeFromSortedSet(byte[] key, byte[] member) {
		return send(this.redis.opsForZSet().remove(key, member));
	}

	private <T> CompletableFuture<T> send(Mono<T> call) {
		if (this.connected) {
			return call.toFuture();
		}
		return call.subscribeOn(Schedulers.boundedElastic()).doOnSuccess((reply) -> this.connected = true).toFuture();
	}

	@Override
	public String toString() {
		return "SpringDataScriptExecutor";
	}

}
