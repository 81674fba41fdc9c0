package io.github.ratelimit.mvc;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two Server MVC gateway instances on one Redis hold a client to one limit together: this test's context is instance
 * A, a second application context of the same gateway (its own Tomcat, limiter and local state) is instance B.
 */
class ServerMvcTwoInstancesIntegrationTest extends ServerMvcRouteIntegrationTest {

	@RegisterExtension
	static final SecondInstance instanceB = new SecondInstance();

	@Test
	void twoInstancesAdmitTogetherExactlyThePlansCapacity() {
		int portB = instanceB.port();
		assertThat(portB).isNotEqualTo(this.port);
		List<String> answers = new ArrayList<>();
		int admitted = 0;
		for (int i = 0; i < 6; i++) {
			int to = (i % 2 == 0) ? this.port : portB;
			HttpResponse<String> response = send(to, "GET", "/a/" + i, "X-API-Key", "key-one");
			answers.add(((to == this.port) ? "A " : "B ") + response.statusCode() + " "
					+ response.headers().firstValue("RateLimit").orElse("-"));
			if (response.statusCode() == 200) {
				admitted++;
			}
			else {
				assertThat(response.statusCode()).isEqualTo(429);
			}
		}
		System.out.println("6 requests of one client alternating between two Server MVC instances: " + answers);
		// plan free, group a: capacity 2, whichever instance asks
		assertThat(admitted).isEqualTo(2);
		assertThat(answers.get(0)).matches("A 200 \"free-a\";r=1;t=\\d+");
		assertThat(answers.get(1)).matches("B 200 \"free-a\";r=0;t=\\d+");
		assertThat(answers.subList(2, 6)).allMatch((answer) -> answer.contains(" 429 "));
	}

}
