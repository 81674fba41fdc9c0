package io.github.ratelimit.frontends;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.chain.Reservation;
import io.github.ratelimit.gateway.redis.RedisRateLimitStore;
import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Tells a test when a request's settlement is over, on every route (with {@code usage} or only {@code count-when}):
 * it watches the gateway's store ({@link RedisRateLimitStore}, the bean proxied, every call passed on unchanged) and
 * counts the {@link Reservation}s of its decisions whose end ({@link Reservation#settle} or
 * {@link Reservation#cancel}, the first call) has completed: the store's call has answered, or there was none to
 * make (nothing to change). Once that count has risen, what the settlement changes in Redis is there. The usage meters
 * would tell the same on routes with {@code usage} only; a {@code count-when} route without usage limits has no
 * signal of its own.
 */
final class Settlements implements BeanPostProcessor {

	private final AtomicLong ended = new AtomicLong();

	/**
	 * The number of reservations whose end has completed since the gateway started.
	 * @return a count, 0 or more
	 */
	long ended() {
		return this.ended.get();
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (!(bean instanceof RedisRateLimitStore)) {
			return bean;
		}
		ProxyFactory proxy = new ProxyFactory(bean);
		proxy.setProxyTargetClass(true);
		proxy.addAdvice((MethodInterceptor) (invocation) -> {
			Object result = invocation.proceed();
			if (invocation.getMethod().getName().equals("tryConsume") && result instanceof CompletableFuture<?> decision) {
				return decision.thenApply((made) -> watched((RateLimitDecision) made));
			}
			return result;
		});
		return proxy.getProxy();
	}

	private RateLimitDecision watched(RateLimitDecision decision) {
		Reservation reservation = decision.reservation();
		return (reservation == Reservation.NONE) ? decision : decision.withReservation(new Reservation() {

			private final AtomicBoolean first = new AtomicBoolean();

			@Override
			public CompletionStage<Long> settle(long used) {
				return counted(reservation.settle(used));
			}

			@Override
			public CompletionStage<Long> cancel() {
				return counted(reservation.cancel());
			}

			@Override
			public long reserved() {
				return reservation.reserved();
			}

			private CompletionStage<Long> counted(CompletionStage<Long> end) {
				if (!this.first.compareAndSet(false, true)) {
					return end;
				}
				return end.whenComplete((charged, ex) -> Settlements.this.ended.incrementAndGet());
			}

		});
	}

}
