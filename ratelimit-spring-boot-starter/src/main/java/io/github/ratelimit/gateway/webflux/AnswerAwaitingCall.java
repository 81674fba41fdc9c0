package io.github.ratelimit.gateway.webflux;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.gateway.route.UsageMeter;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.publisher.Sinks;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import org.springframework.web.server.ServerWebExchange;

/**
 * The filter chain of an exchange on a route whose {@code RateLimit} filter settles by the upstream's answer
 * ({@code count-when}, or {@code usage} read from a header field or the body), run so that the upstream's answer
 * decides what the request is charged whatever its client does: a client that goes away (the server cancels the
 * exchange) neither saves nor costs anything. The chain is subscribed to on its own, and the exchange's subscriber is
 * handed its outcome; once that subscriber has cancelled:
 * <ul>
 * <li>before the request is sent upstream (marked by the {@link UpstreamRequestGlobalFilter}: while it is decided,
 * or its body read for an estimate) the chain is cancelled, as on any route: what it took is given back, and an
 * upstream that never got it decides nothing;</li>
 * <li>once sent, until the upstream's response head has arrived ({@link #statusKnown}, told by the
 * {@link UpstreamRequestGlobalFilter} as Gateway's routing filter completes) the chain runs on as if the client were
 * there, and ends by itself when it cannot get an answer: the route's
 * {@code response-timeout} (or Gateway's {@code httpclient.response-timeout}), an upstream that fails or closes the
 * connection. Without a response timeout it waits as long as it would for a client that stays;</li>
 * <li>once the head has arrived, the chain is cancelled at once when the rest of the answer cannot change the charge
 * ({@link UsageMeter#decided()}: a status that does not count, {@code count-when} only, a usage header): the meter is
 * shown the status (by the {@link UsageMeteringResponse}) and settles by it, and Gateway's response writing filter
 * closes the connection to the upstream;</li>
 * <li>otherwise (the usage is in the body) the chain runs on: the {@link UsageMeteringResponse} reads the rest of the
 * upstream's answer into the meter only, nothing written to the client, each chunk released, until the usage is read
 * or the body ends (at most the route's response timeout after the client went, and within the readers' own byte
 * limits), then the upstream connection is closed and the meter settles. The same holds for a client that goes away
 * mid-answer.</li>
 * </ul>
 * A chain so run holds what its request reserved until it ends, so a client leaves at most as many of them running as
 * its limits admit. Without the {@link UpstreamRequestGlobalFilter} (a bean replaced) no request is known to be sent,
 * and a client that goes away cancels the chain.
 */
final class AnswerAwaitingCall extends BaseSubscriber<Void> {

	/** Exchange attribute holding the running call. */
	static final String ATTRIBUTE = AnswerAwaitingCall.class.getName();

	/** {@link #afterEnd}'s value once the chain has ended. */
	private static final Runnable ENDED = () -> {
	};

	private final ServerWebExchange exchange;

	private final Context context;

	private final Sinks.Empty<Void> outcome = Sinks.empty();

	private final AtomicBoolean stopped = new AtomicBoolean();

	/** What to run once the chain has ended: {@code null} until asked, {@link #ENDED} once ended. */
	private final AtomicReference<Runnable> afterEnd = new AtomicReference<>();

	private volatile boolean clientGone;

	private volatile boolean answered;

	private AnswerAwaitingCall(ServerWebExchange exchange, ContextView context) {
		this.exchange = exchange;
		this.context = Context.of(context);
	}

	/**
	 * Run an exchange's filter chain so that a cancelled subscription waits for the upstream's answer.
	 * @param exchange the exchange
	 * @param chain its filter chain (not yet subscribed)
	 * @return the chain's outcome, for the exchange's subscriber
	 */
	static Mono<Void> run(ServerWebExchange exchange, Mono<Void> chain) {
		return Mono.deferContextual((context) -> {
			AnswerAwaitingCall call = new AnswerAwaitingCall(exchange, context);
			exchange.getAttributes().put(ATTRIBUTE, call);
			chain.subscribe(call);
			return call.outcome.asMono().doOnCancel(call::clientGone);
		});
	}

	/**
	 * The upstream's response head (status and header fields) of the exchange's latest attempt has arrived: ends the
	 * exchange's call, if it runs as one and its client has gone.
	 * @param exchange the exchange
	 */
	static void statusKnown(ServerWebExchange exchange) {
		if (exchange.getAttribute(ATTRIBUTE) instanceof AnswerAwaitingCall call) {
			call.answered = true;
			if (call.clientGone) {
				call.stop();
			}
		}
	}

	/**
	 * Run an action once the exchange's call has ended, if it runs as one and has not ended yet.
	 * @param exchange the exchange
	 * @param action what to run (on the thread that ends the call)
	 * @return {@code false} when there is no call to wait for (the caller runs the action itself)
	 */
	static boolean whenEnded(ServerWebExchange exchange, Runnable action) {
		return exchange.getAttribute(ATTRIBUTE) instanceof AnswerAwaitingCall call
				&& call.afterEnd.compareAndSet(null, action);
	}

	private void clientGone() {
		this.clientGone = true;
		if (!UpstreamRequestGlobalFilter.sentUpstream(this.exchange)) {
			cancelChain(); // not sent upstream (still decided, its body still read): nothing for an answer to decide
			return;
		}
		if (this.exchange.getAttribute(UsageMeteringResponse.ATTRIBUTE) instanceof UsageMeteringResponse metering) {
			metering.clientGone();
		}
		if (this.answered) {
			stop();
		}
	}

	/**
	 * The status is known and nobody waits for the answer: show the meter the status, then cancel the chain unless
	 * the rest of the answer may change the charge (then the response reads it into the meter only).
	 */
	private void stop() {
		if (this.exchange.getAttribute(UsageMeteringResponse.ATTRIBUTE) instanceof UsageMeteringResponse metering
				&& !metering.upstreamAnswered()) {
			return; // the usage is in the body: read on, the response ends the chain once it is read
		}
		cancelChain();
	}

	private void cancelChain() {
		if (this.stopped.compareAndSet(false, true)) {
			dispose();
		}
	}

	@Override
	public Context currentContext() {
		return this.context;
	}

	@Override
	protected void hookOnSubscribe(Subscription subscription) {
		subscription.request(Long.MAX_VALUE);
	}

	@Override
	protected void hookOnComplete() {
		this.outcome.tryEmitEmpty();
	}

	@Override
	protected void hookOnError(Throwable error) {
		this.outcome.tryEmitError(error);
	}

	@Override
	protected void hookFinally(SignalType type) {
		Runnable action = this.afterEnd.getAndSet(ENDED);
		if (action != null) {
			action.run();
		}
	}

	@Override
	public String toString() {
		return "AnswerAwaitingCall[clientGone=" + this.clientGone + ", answered=" + this.answered + "]";
	}

}
