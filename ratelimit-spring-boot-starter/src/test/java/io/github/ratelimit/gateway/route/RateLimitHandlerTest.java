package io.github.ratelimit.gateway.route;

import java.net.InetAddress;
import java.security.Principal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.gateway.chain.HeldSlots;
import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.client.ClientRequest;
import io.github.ratelimit.gateway.client.ClientResolution;
import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.metrics.RateLimitMetrics;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The request path's one call: where the outcome is made, and what a cancelled request gives back. */
class RateLimitHandlerTest {

	private static final ClientKey CLIENT = new ClientKey(ClientKey.Kind.IP, "192.0.2.1", "anonymous");

	private static final RouteLimitSettings ROUTE = new RouteLimitSettings("api", "api", KeyBy.IP, null, 1, false,
			false);

	private static final ClientRequest REQUEST = new ClientRequest() {

		@Override
		public List<String> headerValues(String name) {
			return List.of();
		}

		@Override
		public InetAddress remoteAddress() {
			return InetAddress.getLoopbackAddress();
		}

		@Override
		public Principal principal() {
			return null;
		}

	};

	private final ExecutorService requestLoop = Executors.newSingleThreadExecutor((r) -> new Thread(r, "request-loop"));

	private final LimitResolver limits = new LimitResolver(properties());

	@AfterEach
	void stop() {
		this.requestLoop.shutdownNow();
	}

	@Test
	void aDecisionAnsweredOnAnotherThreadIsMadeIntoTheOutcomeOnTheRequestsExecutor() throws Exception {
		CompletableFuture<RateLimitDecision> answer = new CompletableFuture<>();
		AtomicReference<String> thread = new AtomicReference<>();
		RateLimitHandler handler = handler((request) -> answer, new RateLimitMetrics() {
			@Override
			public void recordDecision(String route, String group, RateLimitDecision decision, boolean shadow) {
				thread.set(Thread.currentThread().getName());
			}
		});
		CompletableFuture<RateLimitOutcome> outcome = handler.handle(REQUEST, ROUTE, this.requestLoop);
		new Thread(() -> answer.complete(allowed(answer)), "redis-io").start();
		assertThat(outcome.get(30, TimeUnit.SECONDS).admitted()).isTrue();
		assertThat(outcome.get().headers().getFirst("RateLimit")).isNotNull();
		assertThat(thread.get()).isEqualTo("request-loop");
	}

	@Test
	void aDecisionAlreadyMadeIsMadeIntoTheOutcomeOnTheCallingThread() {
		CompletableFuture<RateLimitDecision> answer = new CompletableFuture<>();
		answer.complete(allowed(answer));
		CompletableFuture<RateLimitOutcome> outcome = handler((request) -> answer, RateLimitMetrics.NONE)
			.handle(REQUEST, ROUTE, this.requestLoop);
		assertThat(outcome).isDone();
		assertThat(outcome.join().admitted()).isTrue();
	}

	@Test
	void cancellingTheOutcomeCancelsTheCheckAndALateDecisionGivesItsSlotsBack() {
		CompletableFuture<RateLimitDecision> pending = new CompletableFuture<>();
		CompletableFuture<RateLimitOutcome> outcome = handler((request) -> pending, RateLimitMetrics.NONE)
			.handle(REQUEST, ROUTE, Runnable::run);
		outcome.cancel(false);
		assertThat(pending).isCancelled();
		// a chain that answers all the same (its cancel does nothing): the outcome is not made, the slots go back
		AtomicBoolean abandoned = new AtomicBoolean();
		CompletableFuture<RateLimitDecision> late = new CompletableFuture<>() {
			@Override
			public boolean cancel(boolean mayInterruptIfRunning) {
				return false;
			}
		};
		CompletableFuture<RateLimitOutcome> second = handler((request) -> late, RateLimitMetrics.NONE)
			.handle(REQUEST, ROUTE, Runnable::run);
		second.cancel(false);
		late.complete(allowed(late).withSlots(() -> abandoned.set(true)));
		assertThat(second).isCancelled();
		assertThat(abandoned).isTrue();
	}

	@Test
	void aClientNotIdentifiedOrAmbiguousIsRefusedWithoutACheck() {
		AtomicBoolean checked = new AtomicBoolean();
		RateLimitHandler unidentified = new RateLimitHandler(new RateLimitProperties(), this.limits,
				(request, keyBy) -> CompletableFuture.completedFuture(ClientResolution.unidentified()), (request) -> {
					checked.set(true);
					return new CompletableFuture<>();
				}, RateLimitMetrics.NONE);
		assertThat(unidentified.handle(REQUEST, ROUTE, Runnable::run).join().refusal().reason())
			.isEqualTo(RateLimitRefusal.Reason.CLIENT_UNIDENTIFIED);
		RateLimitHandler ambiguous = new RateLimitHandler(new RateLimitProperties(), this.limits,
				(request, keyBy) -> CompletableFuture.completedFuture(ClientResolution.ambiguous("two keys")),
				(request) -> {
					checked.set(true);
					return new CompletableFuture<>();
				}, RateLimitMetrics.NONE);
		RateLimitOutcome refused = ambiguous.handle(REQUEST, ROUTE, Runnable::run).join();
		assertThat(refused.refusal().reason()).isEqualTo(RateLimitRefusal.Reason.AMBIGUOUS_CLIENT);
		assertThat(refused.headers().isEmpty()).isTrue();
		assertThat(checked).isFalse();
	}

	private RateLimitDecision allowed(CompletableFuture<RateLimitDecision> ignored) {
		PlanLimits planLimits = this.limits.limitsFor("anonymous", "api");
		return RateLimitDecision.shared(planLimits, true,
				List.of(new LimitStatus(planLimits.limits().get(0), true, 9, 0, 100)));
	}

	private RateLimitHandler handler(io.github.ratelimit.gateway.chain.LimiterChain checker,
			RateLimitMetrics metrics) {
		return new RateLimitHandler(new RateLimitProperties(), this.limits,
				(request, keyBy) -> CompletableFuture.completedFuture(ClientResolution.identified(CLIENT)), checker,
				metrics);
	}

	private static RateLimitProperties properties() {
		RateLimitProperties properties = new RateLimitProperties();
		RateLimitProperties.Plan anonymous = new RateLimitProperties.Plan();
		RateLimitProperties.Limit limit = new RateLimitProperties.Limit();
		limit.setCapacity(10);
		limit.setRefillTokens(10);
		limit.setRefillPeriod(Duration.ofSeconds(1));
		anonymous.setDefault(List.of(limit));
		properties.getPlans().put("anonymous", anonymous);
		return properties;
	}

}
